"""Metric faults: zeros that are a broken source, not an idle machine.

Pure. :func:`detect` reads every surveyed instance's samples over the fault lookback
(longer than the decision's, so the step into an outage stays in view while it lasts)
and returns, per instance, the stretches of its GPU utilisation that are suspect.
:func:`decide_with_faults` then judges the instance with those stretches left out, and
keeps it ``unknown`` while the fault lasts and for ``fault_hold_minutes`` after it:

- **A step shared by several instances.** A *zero run* is a stretch of periods whose
  busiest GPU reads exactly 0. When at least ``max(3, 1% of the reporting instances)``
  instances enter a zero run in the same period (the period before read above 0), or
  leave one in the same period, while their GPU memory or CPU say a process is alive
  (or every signal reads 0, or there is no other signal to tell), that is an exporter
  or agent breaking or coming back, not jobs ending together: a job that ends frees its
  GPU memory and its CPU goes quiet.
- **A source that stopped changing.** One instance whose every signal steps to exactly 0
  at once, CPU included (a running machine's CPU never reads exactly 0), is a dead
  source on its own.
- Zero runs that are quiet on every signal (GPU memory below the floor, a quiet CPU
  that still reads above 0) are idleness and never suspect, whatever the fleet does.

What stays out of reach (docs/simulation.md): a fault whose start has left the fault
lookback and that has not ended yet looks like a hung job; the circuit breaker guards
the whole fleet then.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from gpuplan.core.lifecycle.idle import IdleDecision, IdleRule, IdleVerdict, decide
from gpuplan.core.lifecycle.idle_signals import Grid, build_grid
from gpuplan.core.lifecycle.instances import HostSamples, InstanceState

MIN_SHARED = 3
"""Instances that must step together in one period for a fleet-wide fault."""
SHARED_PER_HUNDRED = 1
"""...or this many per hundred reporting instances, whichever is more."""


@dataclass(frozen=True)
class Suspect:
    """The suspect stretches of one instance's GPU utilisation."""

    periods: frozenset[datetime]
    """Period starts left out of the decision."""
    ends_at: datetime | None
    """When the last suspect stretch ended (its first non-zero period); None: ongoing."""
    evidence: str


@dataclass(frozen=True)
class _Run:
    instance_id: str
    first: int
    end: int
    """Index after the last zero period."""
    entered: bool
    """The period before read above 0: the step into zeros is in view."""
    left: bool
    """The period after reads above 0: the zeros ended."""
    signs: str
    """What says a process is alive (or that every signal reads 0)."""
    dead: bool
    """Every signal dropped to exactly 0 at once, CPU included."""


def fault_starts(rule: IdleRule, now: datetime) -> list[datetime]:
    """Period starts of the fault lookback (ends where the decision's window ends)."""
    period = rule.period_minutes * 60
    stamp = math.floor(now.timestamp() / period) * period
    end = datetime.fromtimestamp(stamp, tz=now.tzinfo)
    step = timedelta(minutes=rule.period_minutes)
    count = -(-rule.fault_lookback_minutes // rule.period_minutes)
    return [end - step * (count - i) for i in range(count)]


def detect(samples: Mapping[str, HostSamples], rule: IdleRule, now: datetime) -> dict[str, Suspect]:
    """Suspect stretches per instance id, from every instance's samples at once."""
    starts = fault_starts(rule, now)
    runs: list[_Run] = []
    for iid, host in samples.items():
        # A zero run needs an exact 0 somewhere: without one, no grid to build.
        if any(0.0 in series.values() for series in host.utilisation.values()):
            runs.extend(_runs(iid, build_grid(host, starts, 0), rule))
    if not runs:
        return {}
    reporting = sum(1 for h in samples.values() if h.utilisation)
    shared = max(MIN_SHARED, math.ceil(reporting * SHARED_PER_HUNDRED / 100))
    entries = Counter(r.first for r in runs if r.entered)
    exits = Counter(r.end for r in runs if r.left)
    spans = _spans(runs, entries, exits, shared)
    out: dict[str, Suspect] = {}
    for run in runs:
        why = _why(run, entries, exits, shared, starts) or _joined(run, spans, starts)
        if why:
            out[run.instance_id] = _merge(out.get(run.instance_id), run, why, starts)
    return out


def _why(
    run: _Run,
    entries: Mapping[int, int],
    exits: Mapping[int, int],
    shared: int,
    starts: Sequence[datetime],
) -> str:
    if run.entered and entries.get(run.first, 0) >= shared:
        n = entries[run.first]
        return (
            f"GPU utilisation stepped to exactly 0 at {starts[run.first]:%H:%M}Z on {n} "
            f"instances at once while {run.signs}"
        )
    if run.left and exits.get(run.end, 0) >= shared:
        n = exits[run.end]
        return (
            f"GPU utilisation came back from exactly 0 at {starts[run.end]:%H:%M}Z on {n} "
            f"instances at once (zeros since {starts[run.first]:%H:%M}Z while {run.signs})"
        )
    if run.dead and run.entered:
        return (
            f"every signal dropped to exactly 0 at {starts[run.first]:%H:%M}Z, CPU too "
            "(a running machine's CPU never reads exactly 0): the source stopped"
        )
    return ""


def _spans(
    runs: Sequence[_Run], entries: Mapping[int, int], exits: Mapping[int, int], shared: int
) -> list[tuple[int, int]]:
    """[first, end) of each fleet-wide fault: from a shared step into zeros to where the
    last run that took it ends, and from where the first run ends that left zeros in a
    shared step back to it."""
    into: dict[int, int] = {}
    out_of: dict[int, int] = {}
    for r in runs:
        if r.entered and entries[r.first] >= shared:
            into[r.first] = max(into.get(r.first, r.end), r.end)
        if r.left and exits[r.end] >= shared:
            out_of[r.end] = min(out_of.get(r.end, r.first), r.first)
    return sorted([*into.items(), *((first, end) for end, first in out_of.items())])


def _joined(run: _Run, spans: Sequence[tuple[int, int]], starts: Sequence[datetime]) -> str:
    """A zero run that overlaps a fleet-wide fault without taking its step (it was
    already reading 0, or started reporting inside it): its zeros cannot be told from
    the fault's."""
    for first, end in spans:
        if run.first < end and run.end > first:
            return (
                f"GPU utilisation reads exactly 0 through a fault several instances shared "
                f"({starts[first]:%H:%M}Z on) while {run.signs}"
            )
    return ""


def _merge(old: Suspect | None, run: _Run, why: str, starts: Sequence[datetime]) -> Suspect:
    """Runs come oldest first: the newest run says when the fault ended and why."""
    periods = frozenset(starts[run.first : run.end])
    ends_at = starts[run.end] if run.left else None
    return Suspect(periods if old is None else old.periods | periods, ends_at, why)


def _runs(iid: str, grid: Grid, rule: IdleRule) -> list[_Run]:
    """The zero runs of one instance that carry fault evidence (not quiet on all signals)."""
    out: list[_Run] = []
    values = grid.busiest
    if 0.0 not in values:  # no zero run (most instances): skip the scan
        return out
    i = 0
    while i < len(values):
        if values[i] != 0.0:
            i += 1
            continue
        first = i
        while i < len(values) and values[i] == 0.0:
            i += 1
        before = values[first - 1] if first > 0 else None
        after = values[i] if i < len(values) else None
        signs, dead = _evidence(grid, first, i, rule)
        if signs:
            entered = before is not None and before > 0
            out.append(_Run(iid, first, i, entered, after is not None and after > 0, signs, dead))
    return out


def _evidence(grid: Grid, first: int, end: int, rule: IdleRule) -> tuple[str, bool]:
    """What says the zeros are not idleness ("" when every signal is quiet), and whether
    every signal reads exactly 0 after a CPU that did not (a dead source)."""
    memory = [m for m in grid.memory[first:end] if m is not None]
    cpu = [c for c in grid.cpu[first:end] if c is not None]
    top_memory = max(memory, default=None)
    top_cpu = max(cpu, default=None)
    if top_memory is not None and top_memory >= rule.gpu_memory_floor_percent:
        return f"a process holds GPU memory {top_memory:.0f}%", False
    if top_cpu is not None and top_cpu >= rule.cpu_busy_percent:
        return f"the CPU is busy at {top_cpu:.0f}%", False
    if top_cpu == 0.0 and not top_memory:
        prior = grid.cpu[first - 1] if first > 0 else None
        return "GPU memory and CPU read exactly 0 too", bool(prior)
    if top_memory is None and top_cpu is None:
        return "no GPU memory or CPU data to tell", False
    return "", False


def mask(samples: HostSamples, periods: frozenset[datetime]) -> HostSamples:
    """``samples`` with the suspect periods' GPU utilisation left out (as no data)."""
    utilisation = {
        gpu: {t: v for t, v in series.items() if t not in periods}
        for gpu, series in samples.utilisation.items()
    }
    return replace(samples, utilisation=utilisation)


_FROM_SAMPLES = (IdleVerdict.IDLE, IdleVerdict.BUSY, IdleVerdict.UNKNOWN)


def judge_suspect(
    decision: IdleDecision, suspect: Suspect, rule: IdleRule, now: datetime
) -> IdleDecision:
    """The verdict of an instance with suspect stretches (already decided without them)."""
    if decision.verdict not in _FROM_SAMPLES:
        return decision
    busy = decision.max_percent is not None and decision.max_percent >= rule.threshold_percent
    hold = timedelta(minutes=rule.fault_hold_minutes)
    if suspect.ends_at is None:
        until = "while it lasts"
    elif now < suspect.ends_at + hold:
        until = f"recovery hold until {suspect.ends_at + hold:%H:%M}Z (fault_hold_minutes)"
    else:
        note = f"; suspect zeros not counted ({suspect.evidence})"
        return replace(decision, reason=decision.reason + note, suspect=suspect.evidence)
    if busy:
        return replace(decision, suspect=suspect.evidence)
    return replace(
        decision,
        verdict=IdleVerdict.UNKNOWN,
        reason=f"metrics suspect: {suspect.evidence}; {until}",
        suspect=suspect.evidence,
    )


def decide_with_faults(
    samples: HostSamples | None,
    suspect: Suspect | None,
    *,
    started_at: datetime | None,
    labels: Mapping[str, str],
    state: InstanceState,
    rule: IdleRule,
    now: datetime,
    gpu_count: float = 0,
    managed_by: str | None = None,
) -> IdleDecision:
    """:func:`gpuplan.core.lifecycle.idle.decide` with the suspect stretches left out and held."""
    masked = samples if suspect is None or samples is None else mask(samples, suspect.periods)
    decision = decide(
        masked,
        started_at=started_at,
        labels=labels,
        state=state,
        rule=rule,
        now=now,
        gpu_count=gpu_count,
        managed_by=managed_by,
    )
    return decision if suspect is None else judge_suspect(decision, suspect, rule, now)
