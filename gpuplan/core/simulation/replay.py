"""Replay the scheduled idle job over traces and score it against two oracles.

Every ``interval`` minutes the job looks at each running instance exactly as
``gpuplan stop-idle`` would (:func:`gpuplan.core.idle.decide` on period maxima of the
trailing window, boot grace from the last start) and stops it when the verdict is
``idle``. A stopped instance restarts when its next busy stretch begins (the person or
the scheduler comes back), so stopping never shortens the work in the trace.

Scores, in minutes of instance time and in dollars at each trace's hourly price:

- ``saved``: stopped minutes that fall in idle-labelled stretches;
- ``window oracle``: for each idle stretch longer than the window, its length minus the
  window: the best any threshold-and-window policy can do;
- ``perfect oracle``: every idle minute;
- ``false stops``: stops inside a busy-labelled stretch (a pause shorter than the
  window counts as busy); ``disrupted`` minutes are the busy minutes they cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from gpuplan.core.fleet import InstanceState
from gpuplan.core.idle import IdleRule, IdleVerdict, decide, period_starts
from gpuplan.core.simulation.traces import Trace

_MINUTES_PER_HOUR = Decimal(60)


@dataclass(frozen=True)
class StopEvent:
    minute: int
    false_stop: bool
    label: str
    """The label of the stretch the stop landed in."""


@dataclass(frozen=True)
class TraceResult:
    instance_id: str
    trace_class: str
    instance_type: str
    hourly_usd: Decimal
    stops: tuple[StopEvent, ...]
    saved_minutes: int
    disrupted_minutes: int
    window_oracle_minutes: int
    perfect_oracle_minutes: int

    def usd(self, minutes: int) -> Decimal:
        return self.hourly_usd * minutes / _MINUTES_PER_HOUR

    @property
    def false_stops(self) -> int:
        return sum(1 for s in self.stops if s.false_stop)


@dataclass(frozen=True)
class SimulationResult:
    rule: IdleRule
    interval_minutes: int
    traces: tuple[TraceResult, ...]

    @property
    def saved_usd(self) -> Decimal:
        return sum((t.usd(t.saved_minutes) for t in self.traces), Decimal(0))

    @property
    def window_oracle_usd(self) -> Decimal:
        return sum((t.usd(t.window_oracle_minutes) for t in self.traces), Decimal(0))

    @property
    def perfect_oracle_usd(self) -> Decimal:
        return sum((t.usd(t.perfect_oracle_minutes) for t in self.traces), Decimal(0))

    @property
    def disrupted_usd(self) -> Decimal:
        return sum((t.usd(t.disrupted_minutes) for t in self.traces), Decimal(0))

    @property
    def false_stops(self) -> int:
        return sum(t.false_stops for t in self.traces)

    @property
    def stops(self) -> int:
        return sum(len(t.stops) for t in self.traces)

    def share_of(self, oracle_usd: Decimal) -> float | None:
        return None if oracle_usd == 0 else float(self.saved_usd / oracle_usd)


def simulate(
    traces: Sequence[Trace], *, rule: IdleRule, interval_minutes: int, epoch: datetime
) -> SimulationResult:
    """Replay the job every ``interval_minutes`` over each trace starting at ``epoch``."""
    if interval_minutes <= 0:
        raise ValueError("interval_minutes must be positive")
    results = tuple(
        replay_trace(t, rule=rule, interval=interval_minutes, epoch=epoch) for t in traces
    )
    return SimulationResult(rule=rule, interval_minutes=interval_minutes, traces=results)


def replay_trace(trace: Trace, *, rule: IdleRule, interval: int, epoch: datetime) -> TraceResult:
    stopped = bytearray(trace.minutes)
    stops: list[StopEvent] = []
    running_since = 0
    tick = interval
    while tick <= trace.minutes:
        now = epoch + timedelta(minutes=tick)
        samples = _window_samples(trace, rule, now, epoch, running_since)
        verdict = decide(
            samples,
            started_at=epoch + timedelta(minutes=running_since),
            labels={},
            state=InstanceState.RUNNING,
            rule=rule,
            now=now,
            gpu_count=1,
        ).verdict
        if verdict is IdleVerdict.IDLE and tick < trace.minutes:
            segment = _segment_label(trace, tick)
            stops.append(StopEvent(tick, trace.kind_at(tick) == "busy", segment))
            restart = _next_busy_start(trace, tick)
            stopped[tick:restart] = b"\x01" * (restart - tick)
            running_since = restart
            tick = ((restart // interval) + 1) * interval
            continue
        tick += interval
    saved = disrupted = 0
    for minute, flag in enumerate(stopped):
        if flag:
            if trace.kind_at(minute) == "idle":
                saved += 1
            else:
                disrupted += 1
    window, perfect = _oracles(trace, rule.window_minutes)
    return TraceResult(
        instance_id=trace.instance_id,
        trace_class=trace.trace_class,
        instance_type=trace.instance_type,
        hourly_usd=trace.hourly_usd,
        stops=tuple(stops),
        saved_minutes=saved,
        disrupted_minutes=disrupted,
        window_oracle_minutes=window,
        perfect_oracle_minutes=perfect,
    )


def _window_samples(
    trace: Trace, rule: IdleRule, now: datetime, epoch: datetime, running_since: int
) -> dict[str, dict[datetime, float]]:
    """Period maxima of what the instance reported since it last started."""
    series: dict[datetime, float] = {}
    step = rule.period_minutes
    for start in period_starts(rule, now):
        first = int((start - epoch).total_seconds() // 60)
        lo, hi = max(first, running_since, 0), min(first + step, trace.minutes)
        values = [v for v in trace.utilisation[lo:hi] if v is not None]
        if values:
            series[start] = max(values)
    return {"0": series} if series else {}


def _segment_label(trace: Trace, minute: int) -> str:
    for seg in trace.segments:
        if seg.start <= minute < seg.end:
            return seg.label
    return "after the trace"


def _next_busy_start(trace: Trace, minute: int) -> int:
    """Where the instance starts again: the next busy stretch that starts after ``minute``."""
    for seg in trace.segments:
        if seg.kind == "busy" and seg.start > minute:
            return seg.start
    return trace.minutes


def _oracles(trace: Trace, window: int) -> tuple[int, int]:
    """(window oracle, perfect oracle) idle minutes over maximal idle runs."""
    window_total = perfect_total = 0
    run = 0
    for seg in (*trace.segments, None):
        if seg is not None and seg.kind == "idle":
            run += seg.end - seg.start
            continue
        window_total += max(0, run - window)
        perfect_total += run
        run = 0
    return window_total, perfect_total
