"""Replay the scheduled idle job over traces and score it against two oracles.

Every ``interval`` minutes the job looks at every running instance exactly as
``gpuplan stop-idle`` would: :func:`gpuplan.core.lifecycle.idle.decide` on period maxima of what a
live run could have seen (nothing before minute 0, nothing from before the instance last
started, nothing from the open period), boot grace from the last start. Then, as the
action planner does (:mod:`gpuplan.core.lifecycle.plan`):

- ``notify`` stops nothing and saves nothing: the would-be stops are reported as flags;
- ``notice_minutes`` > 0: the first idle verdict starts a notice, a later run acts only
  once it has passed and the instance is still idle; a non-idle verdict withdraws it;
- at most ``max_actions_per_run`` stops per run, most dollars at stake first (hourly
  price, then idle minutes); the rest are deferred to the next run;
- metric faults are read across the running fleet (:mod:`gpuplan.core.lifecycle.faults`, as the
  survey reads them across every scope): suspect zeros are left out, and a suspect
  instance stays unknown while the fault lasts and through ``fault_hold_minutes``;
- the circuit breaker (:func:`gpuplan.core.lifecycle.plan.breaker_reason`, the same function
  ``stop-idle`` uses) aborts a run's actions when the would-be stops not idle on every
  signal reach ``breaker_percent`` of the running instances and number
  ``breaker_min_actions`` or more.

A stopped instance restarts when its next busy stretch begins (the person or the
scheduler comes back), so stopping never shortens the work in the trace.

Scores, in minutes of instance time and in dollars at each trace's hourly price:

- ``saved``: stopped minutes that fall in idle-labelled stretches;
- ``window oracle``: for each idle stretch longer than the window, its length minus the
  window: the best any threshold-and-window policy can do;
- ``perfect oracle``: every idle minute;
- ``harmful stops`` (``false_stops``): stops inside a busy-labelled stretch, i.e. during
  a live session, pauses included; ``disrupted`` minutes are the busy minutes they cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from gpuplan.core.lifecycle.faults import Suspect, decide_with_faults, detect, fault_starts
from gpuplan.core.lifecycle.idle import IdleDecision, IdleRule, IdleVerdict
from gpuplan.core.lifecycle.instances import HostSamples, InstanceState
from gpuplan.core.lifecycle.plan import breaker_reason, counted
from gpuplan.core.lifecycle.simulation.traces import Trace
from gpuplan.core.lifecycle.simulation.window import PeriodReader

_MINUTES_PER_HOUR = Decimal(60)


@dataclass(frozen=True)
class ActionSettings:
    """The ``idle:`` action settings the replay honours."""

    stops: bool = True
    """False for ``action: notify``: flag, never stop."""
    notice_minutes: int = 0
    max_actions_per_run: int = 10_000
    breaker_percent: float = 100.0
    breaker_min_actions: int = 2**31
    """Off unless set: no run has that many stops due."""


@dataclass(frozen=True)
class StopEvent:
    minute: int
    false_stop: bool
    label: str
    """The label of the stretch the stop landed in."""
    reason: str = ""


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
    flags: tuple[StopEvent, ...] = ()
    """Would-be stops under ``action: notify`` (nothing stopped)."""

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
    actions: ActionSettings = field(default_factory=ActionSettings)
    aborted_runs: int = 0
    """Scheduled runs whose actions the circuit breaker aborted."""
    deferred_runs: int = 0
    """Scheduled runs that reached ``max_actions_per_run`` and deferred some stops."""
    deferrals: int = 0
    """Would-be stops deferred to a later run by the cap (one instance may count twice)."""

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

    @property
    def flags(self) -> int:
        return sum(len(t.flags) for t in self.traces)

    def share_of(self, oracle_usd: Decimal) -> float | None:
        return None if oracle_usd == 0 else float(self.saved_usd / oracle_usd)


@dataclass
class _Live:
    """One instance during the replay."""

    trace: Trace
    reader: PeriodReader
    running_since: int = 0
    stopped_until: int = 0
    notice_until: int | None = None
    stopped: bytearray = field(default_factory=bytearray)
    stops: list[StopEvent] = field(default_factory=list)
    flags: list[StopEvent] = field(default_factory=list)


def simulate(
    traces: Sequence[Trace],
    *,
    rule: IdleRule,
    interval_minutes: int,
    epoch: datetime,
    actions: ActionSettings | None = None,
) -> SimulationResult:
    """Replay the job every ``interval_minutes`` over all traces, starting at ``epoch``."""
    if interval_minutes <= 0:
        raise ValueError("interval_minutes must be positive")
    settings = actions or ActionSettings()
    step = rule.period_minutes
    fleet = [_Live(t, PeriodReader(t, step), stopped=bytearray(t.minutes)) for t in traces]
    horizon = max((t.minutes for t in traces), default=0)
    aborted = deferred_runs = deferrals = 0
    for tick in range(interval_minutes, horizon, interval_minutes):
        now = epoch + timedelta(minutes=tick)
        up = [live for live in fleet if live.stopped_until <= tick < live.trace.minutes]
        starts = fault_starts(rule, now)
        first = tick - int((now - starts[0]).total_seconds() // 60) if starts else 0
        seen = {
            live.trace.instance_id: live.reader.samples(
                starts, first, max(live.running_since, 0), min(live.trace.minutes, tick)
            )
            for live in up
        }
        suspects = detect(seen, rule, now)
        due = [
            (live, d) for live in up if (d := _due(live, tick, now, rule, settings, seen, suspects))
        ]
        if breaker_reason(
            counted(d for _, d in due),
            len(up),
            settings.breaker_percent,
            settings.breaker_min_actions,
        ):
            aborted += 1
            continue
        due.sort(key=_at_stake)
        late = due[settings.max_actions_per_run :]
        deferred_runs += bool(late)
        deferrals += len(late)
        for live, decision in due[: settings.max_actions_per_run]:
            _act(live, tick, decision, settings)
    results = tuple(_score(live, rule) for live in fleet)
    return SimulationResult(
        rule, interval_minutes, results, settings, aborted, deferred_runs, deferrals
    )


def _at_stake(due: tuple[_Live, IdleDecision]) -> tuple[Decimal, int, str]:
    """As the planner orders them: hourly price, then idle minutes, then id."""
    live, decision = due
    return (-live.trace.hourly_usd, -(decision.idle_minutes or 0), live.trace.instance_id)


def replay_trace(trace: Trace, *, rule: IdleRule, interval: int, epoch: datetime) -> TraceResult:
    """One trace on its own (no fleet-wide action cap)."""
    return simulate([trace], rule=rule, interval_minutes=interval, epoch=epoch).traces[0]


def _due(
    live: _Live,
    tick: int,
    now: datetime,
    rule: IdleRule,
    settings: ActionSettings,
    seen: Mapping[str, HostSamples],
    suspects: Mapping[str, Suspect],
) -> IdleDecision | None:
    """The idle decision when this run would act on ``live`` now, else None."""
    iid = live.trace.instance_id
    decision = decide_with_faults(
        seen[iid],
        suspects.get(iid),
        started_at=now - timedelta(minutes=tick - live.running_since),
        labels={},
        state=InstanceState.RUNNING,
        rule=rule,
        now=now,
        gpu_count=1,
    )
    if decision.verdict is not IdleVerdict.IDLE:
        if decision.verdict is IdleVerdict.BUSY:
            live.notice_until = None
        return None
    if settings.stops and settings.notice_minutes > 0:
        if live.notice_until is None:
            live.notice_until = tick + settings.notice_minutes
            return None
        if tick < live.notice_until:
            return None
    return decision


def _act(live: _Live, tick: int, decision: IdleDecision, settings: ActionSettings) -> None:
    trace = live.trace
    event = StopEvent(tick, trace.kind_at(tick) == "busy", _segment_label(trace, tick),
                      decision.reason)  # fmt: skip
    if not settings.stops:
        live.flags.append(event)
        return
    live.stops.append(event)
    restart = _next_busy_start(trace, tick)
    live.stopped[tick:restart] = b"\x01" * (restart - tick)
    live.running_since = live.stopped_until = restart
    live.notice_until = None


def _score(live: _Live, rule: IdleRule) -> TraceResult:
    trace = live.trace
    stopped = live.stopped
    disrupted = (
        int.from_bytes(stopped) & int.from_bytes(_busy_minutes(trace, len(stopped)))
    ).bit_count()
    saved = stopped.count(1) - disrupted
    window, perfect = _oracles(trace, rule.window_minutes)
    return TraceResult(
        instance_id=trace.instance_id,
        trace_class=trace.trace_class,
        instance_type=trace.instance_type,
        hourly_usd=trace.hourly_usd,
        stops=tuple(live.stops),
        saved_minutes=saved,
        disrupted_minutes=disrupted,
        window_oracle_minutes=window,
        perfect_oracle_minutes=perfect,
        flags=tuple(live.flags),
    )


def _busy_minutes(trace: Trace, n: int) -> bytearray:
    """1 for each of the first ``n`` minutes that :meth:`Trace.kind_at` calls busy (the
    first segment holding a minute decides it, so the segments are laid last to first)."""
    out = bytearray(n)
    for seg in reversed(trace.segments):
        lo = min(max(seg.start, 0), n)
        hi = min(max(seg.end, lo), n)
        out[lo:hi] = (b"\x01" if seg.kind == "busy" else b"\x00") * (hi - lo)
    return out


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
