"""The replay's period maxima equal their plain definition, and a whole period's minutes
are read once for the whole replay (not at every tick, as before)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan.core.lifecycle.idle import IdleRule
from gpuplan.core.lifecycle.instances import HostSamples
from gpuplan.core.lifecycle.simulation.replay import simulate
from gpuplan.core.lifecycle.simulation.traces import Segment, Trace
from gpuplan.core.lifecycle.simulation.window import PeriodReader

BASE = datetime(2026, 1, 5, tzinfo=UTC)
VALUE = st.one_of(st.none(), st.sampled_from([0.0, 0.5, 5.0, 100.0]), st.floats(0, 100))
COLUMN = st.lists(VALUE, min_size=0, max_size=60)


def plain(
    trace: Trace, starts: Sequence[datetime], first: int, step: int, since: int, end: int
) -> HostSamples:
    """The definition, written the obvious way (the replay's code before it was cached)."""
    util: dict[datetime, float] = {}
    memory: dict[datetime, float] = {}
    cpu: dict[datetime, float] = {}
    for index, start in enumerate(starts):
        lo, hi = max(first + index * step, since), min(first + (index + 1) * step, end)
        for column, out in ((trace.utilisation, util), (trace.memory, memory), (trace.cpu, cpu)):
            values = [v for v in (column or ())[lo:hi] if v is not None]
            if hi > lo and values:
                out[start] = max(values)
    return HostSamples(
        utilisation={"0": util} if util else {}, memory={"0": memory} if memory else {}, cpu=cpu
    )


Column = Sequence[float | None]


def make(util: Column, memory: Column | None, cpu: Column | None) -> Trace:
    n = len(util)
    return Trace("t", "g5.xlarge", "hand", Decimal(1), tuple(util), (Segment(0, n, "busy", "x"),),
                 memory=None if memory is None else tuple((list(memory) + [None] * n)[:n]),
                 cpu=None if cpu is None else tuple((list(cpu) + [None] * n)[:n]))  # fmt: skip


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    util=COLUMN,
    memory=st.one_of(st.none(), COLUMN),
    cpu=st.one_of(st.none(), COLUMN),
    step=st.integers(1, 7),
    first=st.integers(-20, 40),
    periods=st.integers(0, 12),
    since=st.integers(0, 70),
    end=st.integers(0, 70),
)
def test_the_maxima_are_their_definition(
    util: list[float | None],
    memory: list[float | None] | None,
    cpu: list[float | None] | None,
    step: int,
    first: int,
    periods: int,
    since: int,
    end: int,
) -> None:
    trace = make(util, memory, cpu)
    end = min(end, trace.minutes)
    starts = [BASE + timedelta(minutes=step * i) for i in range(periods)]
    reader = PeriodReader(trace, step)
    for _ in range(2):  # the second time from the cached whole periods
        got = reader.samples(starts, first, since, end)
        want = plain(trace, starts, first, step, since, end)
        assert repr(got) == repr(want)  # nan != nan; the repr also pins the key order


class Counted(tuple[float | None, ...]):
    """A trace column that counts the minutes read from it."""

    reads = 0

    def __getitem__(self, key):  # type: ignore[no-untyped-def, override]
        got = super().__getitem__(key)
        Counted.reads += len(got) if isinstance(key, slice) else 1
        return got


def test_each_minute_is_read_about_once_per_replay() -> None:
    minutes = 24 * 60
    column = Counted([40.0 + m % 50 for m in range(minutes)])  # busy: never stopped
    busy = Trace("t", "g5.xlarge", "hand", Decimal(1), column, (Segment(0, minutes, "busy", "x"),))
    Counted.reads = 0
    assert simulate([busy], rule=IdleRule(), interval_minutes=10, epoch=BASE).stops == 0
    # The old replay read the whole fault lookback (72 periods of 5 minutes) at every
    # tick: 143 ticks x 360 minutes. Now each whole period is read once.
    assert Counted.reads <= 2 * minutes
