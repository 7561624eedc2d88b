"""What the scheduled job reads of one trace: period maxima, each computed once.

At every tick the replay (:mod:`gpuplan.core.lifecycle.simulation.replay`) asks each running
instance for the period maxima of its GPU utilisation, GPU memory and CPU over the fault
lookback (dozens of periods), of which only the newest change from one tick to the next.
A period the instance ran through whole reads the same at every tick, so its maxima are
computed once for the whole trace; only a period cut by the instance's last start or by
the end of the trace is read from the minutes again. The figures are those of the plain
definition (tests/core/simulation/test_window.py checks them against it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import cast

from gpuplan.core.lifecycle.instances import HostSamples
from gpuplan.core.lifecycle.simulation.traces import Trace

Column = Sequence[float | None]
Peaks = tuple[list[float | None], list[float | None], list[float | None]]
"""Per whole period of a trace: the highest GPU utilisation, GPU memory and CPU."""


class PeriodReader:
    """One trace's period maxima, periods ``step`` minutes long."""

    def __init__(self, trace: Trace, step: int) -> None:
        self.trace = trace
        self.step = step
        self._whole: dict[int, Peaks] = {}
        """Per offset of the period grid (its first minute modulo ``step``)."""

    def samples(self, starts: Sequence[datetime], first: int, since: int, end: int) -> HostSamples:
        """Period maxima at ``starts`` (``step`` minutes apart, the first beginning at minute
        ``first`` of the trace) of what was reported in minutes [``since``, ``end``)."""
        step, count = self.step, len(starts)
        lo = min(count, max(0, -(-(since - first) // step)))  # first period from `since` on
        hi = min(count, max(lo, (end - first) // step))  # after the last that ends by `end`
        out: tuple[dict[datetime, float], ...] = ({}, {}, {})
        if lo > 0:
            self._cut(out, starts[lo - 1], first + (lo - 1) * step, since, end)
        if hi > lo:
            offset = first % step
            k = (first - offset) // step + lo
            for whole, into in zip(self._peaks(offset), out, strict=True):
                values = whole[k : k + hi - lo]
                pairs = zip(starts[lo:hi], values, strict=True)
                if None in values:
                    into.update((t, v) for t, v in pairs if v is not None)
                else:  # plain floats: no filter to run
                    into.update(cast("Iterable[tuple[datetime, float]]", pairs))
        if hi < count:
            self._cut(out, starts[hi], first + hi * step, since, end)
        util, memory, cpu = out
        return HostSamples(
            utilisation={"0": util} if util else {},
            memory={"0": memory} if memory else {},
            cpu=cpu,
        )

    def _cut(
        self,
        out: tuple[dict[datetime, float], ...],
        start: datetime,
        first: int,
        since: int,
        end: int,
    ) -> None:
        """One period the instance did not run through whole: read from the minutes."""
        lo, hi = max(first, since), min(first + self.step, end)
        if hi <= lo:
            return
        trace = self.trace
        for column, into in zip((trace.utilisation, trace.memory, trace.cpu), out, strict=True):
            value = peak(column, lo, hi)
            if value is not None:
                into[start] = value

    def _peaks(self, offset: int) -> Peaks:
        """Maxima of every whole period of the trace whose grid starts at ``offset``."""
        found = self._whole.get(offset)
        if found is None:
            trace, step = self.trace, self.step
            firsts = range(offset, trace.minutes - step + 1, step)

            def whole(column: Column | None) -> list[float | None]:
                if column is None or None in column:
                    return [peak(column, lo, lo + step) for lo in firsts]
                floats = cast("Sequence[float]", column)  # nothing to leave out
                return [max(floats[lo : lo + step]) for lo in firsts]

            found = whole(trace.utilisation), whole(trace.memory), whole(trace.cpu)
            self._whole[offset] = found
        return found


def peak(column: Column | None, lo: int, hi: int) -> float | None:
    """The highest value reported in minutes [lo, hi) of ``column``, or None."""
    if column is None:
        return None
    return max((v for v in column[lo:hi] if v is not None), default=None)
