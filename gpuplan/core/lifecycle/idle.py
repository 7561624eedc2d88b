"""The idle decision: is this GPU instance idle, busy, or can we not tell?

Pure: samples, start time, labels, the rule and ``now`` come in; a verdict with a reason
goes out. The rules, from what went wrong for others (docs/lifecycle.md, "How an
instance is judged"):

- Per period, the busiest GPU of the instance counts (one busy GPU = a busy instance).
- A period is *covered* only when every GPU of the instance reported in it. Missing or
  thin data is ``unknown``, never idle.
- ``idle`` only when coverage >= ``min_coverage_percent`` and every period's busiest GPU
  is below ``threshold_percent`` over the whole window. Any sample at or above the
  threshold makes the instance ``busy``, whatever the coverage.
- GPU memory and CPU tell a paused job from an abandoned machine
  (:mod:`gpuplan.core.lifecycle.idle_signals`): a live process or a busy CPU earns the longer
  ``live_process_window_minutes``; without those signals the utilisation-only rule applies.
- Boot grace after launch or start; the exempt tag (while its date or span holds:
  :mod:`gpuplan.core.lifecycle.exemptions`) and an unexpired
  ``gpuplan-snooze-until`` tag exempt; managed instances are never ours to stop.

Tag values gpuplan writes are valid on all three clouds: ``20261202t101500z``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from gpuplan.core.lifecycle.idle_signals import Grid, build_grid, judge, quiet_minutes
from gpuplan.core.lifecycle.idle_signals import IdleRule as IdleRule
from gpuplan.core.lifecycle.instances import HostSamples, InstanceState, label_mismatch

SNOOZE_TAG = "gpuplan-snooze-until"
STOP_AFTER_TAG = "gpuplan-stop-after"
STOPPED_AT_TAG = "gpuplan-stopped-at"
REASON_TAG = "gpuplan-reason"
_TAG_TIME = "%Y%m%dt%H%M%Sz"


class IdleVerdict(StrEnum):
    IDLE = "idle"
    BUSY = "busy"
    UNKNOWN = "unknown"
    GRACE = "grace"
    EXEMPT = "exempt"
    MANAGED = "managed"
    OUT_OF_SCOPE = "out_of_scope"


@dataclass(frozen=True)
class IdleDecision:
    """A verdict with its reason and the figures behind it."""

    verdict: IdleVerdict
    reason: str
    coverage_percent: float | None = None
    max_percent: float | None = None
    mean_percent: float | None = None
    idle_minutes: int | None = None
    """Minutes of trailing periods below the threshold (within the lookback)."""
    memory_percent: float | None = None
    """Fullest GPU's memory in use over the window, percent; None when not reported."""
    cpu_percent: float | None = None
    """Highest instance CPU over the window, percent; None when not reported."""
    needed_minutes: int | None = None
    """The window that decided an idle or busy-but-quiet verdict."""
    every_signal_quiet: bool = False
    """Idle with GPU memory below the floor and a quiet CPU, both reported: three signals
    agree (the circuit breaker does not count such an instance)."""
    suspect: str | None = None
    """The evidence of a metrics fault (:mod:`gpuplan.core.lifecycle.faults`); None when none."""


def format_tag_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(_TAG_TIME)


def parse_tag_time(text: str) -> datetime | None:
    """A tag time (``20261202t101500z``, any case), or None when unreadable."""
    try:
        return datetime.strptime(text.strip().lower(), _TAG_TIME).replace(tzinfo=UTC)
    except ValueError:
        return None


def window_bounds(rule: IdleRule, now: datetime) -> tuple[datetime, datetime]:
    """(start, end) of what the decision reads (the longer of the window and the
    live-process window), aligned to period boundaries; the open period is out."""
    return _bounds(rule.period_minutes, rule.lookback_minutes, now)


def _bounds(period_minutes: int, lookback_minutes: int, now: datetime) -> tuple[datetime, datetime]:
    period = period_minutes * 60
    stamp = math.floor(now.timestamp() / period) * period
    end = datetime.fromtimestamp(stamp, tz=UTC)
    return end - timedelta(minutes=lookback_minutes), end


def period_starts(rule: IdleRule, now: datetime) -> list[datetime]:
    return list(_period_starts(rule.period_minutes, rule.lookback_minutes, now))


@functools.lru_cache(maxsize=16)
def _period_starts(
    period_minutes: int, lookback_minutes: int, now: datetime
) -> tuple[datetime, ...]:
    """Cached: every instance of one survey (or of one simulated run) has the same grid."""
    start, end = _bounds(period_minutes, lookback_minutes, now)
    step = timedelta(minutes=period_minutes)
    return tuple(start + step * i for i in range(-(-(end - start) // step)))


def decide(
    samples: HostSamples | None,
    *,
    started_at: datetime | None,
    labels: Mapping[str, str],
    state: InstanceState,
    rule: IdleRule,
    now: datetime,
    gpu_count: float = 0,
    managed_by: str | None = None,
) -> IdleDecision:
    """The verdict for one instance. ``gpu_count`` is how many GPUs must report."""
    early = _before_data(
        started_at=started_at,
        labels=labels,
        state=state,
        rule=rule,
        now=now,
        managed_by=managed_by,
    )
    if early is not None:
        return early
    got = samples if samples is not None else HostSamples()
    decision = _from_samples(got, rule=rule, now=now, gpu_count=gpu_count)
    matched_by = got.matched_by
    if matched_by and decision.verdict is not IdleVerdict.UNKNOWN:
        decision = replace(decision, reason=f"{decision.reason}; {matched_by}")
    return decision


def _before_data(
    *,
    started_at: datetime | None,
    labels: Mapping[str, str],
    state: InstanceState,
    rule: IdleRule,
    now: datetime,
    managed_by: str | None,
) -> IdleDecision | None:
    mismatch = label_mismatch(labels, rule.match_labels)
    if mismatch:
        return IdleDecision(IdleVerdict.OUT_OF_SCOPE, mismatch)
    if state is not InstanceState.RUNNING and state is not InstanceState.PENDING:
        return IdleDecision(IdleVerdict.OUT_OF_SCOPE, f"{state.value}: not running")
    if managed_by:
        return IdleDecision(
            IdleVerdict.MANAGED,
            f"managed by {managed_by}: stopping it would only trigger a replacement",
        )
    exemption = exempt(labels, rule, now)
    if exemption is not None:
        return exemption
    snooze = _snooze(labels, now)
    if snooze is not None:
        return snooze
    if state is InstanceState.PENDING:
        return IdleDecision(IdleVerdict.GRACE, "starting (pending)")
    if started_at is not None:
        grace_end = started_at + timedelta(minutes=rule.grace_minutes)
        if now < grace_end:
            return IdleDecision(
                IdleVerdict.GRACE,
                f"started {_minutes(now - started_at)} min ago; "
                f"grace of {rule.grace_minutes} min after start",
            )
    return None


def exempt(labels: Mapping[str, str], rule: IdleRule, now: datetime) -> IdleDecision | None:
    """EXEMPT while the exempt tag's value holds (:mod:`gpuplan.core.lifecycle.exemptions`): a
    date or span not yet ended, or a refused value whose notice has not run out; None
    when there is no tag or it no longer exempts."""
    # Imported here: exemptions reads this module's tag-time format.
    from gpuplan.core.lifecycle.exemptions import judge as judge_exemption

    found = judge_exemption(labels, rule.exempt_tag, now, rule.exempt_max_days)
    return IdleDecision(IdleVerdict.EXEMPT, found.reason) if found.state.exempts else None


def _snooze(labels: Mapping[str, str], now: datetime) -> IdleDecision | None:
    raw = labels.get(SNOOZE_TAG)
    if raw is None:
        return None
    until = parse_tag_time(raw)
    if until is None:
        return IdleDecision(
            IdleVerdict.EXEMPT,
            f"{SNOOZE_TAG}={raw!r} is unreadable (expected e.g. 20261202t101500z); "
            "treated as snoozed",
        )
    if now < until:
        return IdleDecision(IdleVerdict.EXEMPT, f"snoozed until {until:%Y-%m-%d %H:%M}Z")
    return None


def _from_samples(
    samples: HostSamples, *, rule: IdleRule, now: datetime, gpu_count: float
) -> IdleDecision:
    full = build_grid(samples, period_starts(rule, now), gpu_count)
    window = full.tail(max(1, math.ceil(rule.window_minutes / rule.period_minutes)))
    known = [b for b in window.busiest if b is not None]
    if not known:
        return IdleDecision(
            IdleVerdict.UNKNOWN,
            f"no GPU metrics in the last {rule.window_minutes} min: "
            "install or fix the GPU metrics agent",
            coverage_percent=0.0,
        )
    peak = max(known)
    stats = IdleDecision(
        IdleVerdict.IDLE,
        "",
        coverage_percent=window.coverage,
        max_percent=peak,
        mean_percent=sum(known) / len(known),
        idle_minutes=quiet_minutes(full, rule),
    )
    if peak >= rule.threshold_percent:
        when = window.starts[window.busiest.index(peak)]
        reason = (
            f"busiest GPU at {peak:g}% at {when:%H:%M}Z (threshold {rule.threshold_percent:g}%)"
        )
        return replace(stats, verdict=IdleVerdict.BUSY, reason=reason)
    if window.coverage < rule.min_coverage_percent:
        return replace(
            stats, verdict=IdleVerdict.UNKNOWN, reason=_thin_reason(window, samples, rule)
        )
    verdict = judge(window, full, rule)
    return replace(
        stats,
        verdict=IdleVerdict.IDLE if verdict.idle else IdleVerdict.BUSY,
        reason=f"{verdict.reason} (max {peak:g}%, coverage {window.coverage:.0f}%)",
        idle_minutes=verdict.quiet_minutes,
        memory_percent=verdict.memory_percent,
        cpu_percent=verdict.cpu_percent,
        needed_minutes=verdict.needed_minutes,
        every_signal_quiet=verdict.every_signal_quiet,
    )


def _thin_reason(window: Grid, samples: HostSamples, rule: IdleRule) -> str:
    covered, periods = sum(window.covered), len(window.starts)
    reason = (
        f"thin data: every GPU reported in {covered} of {periods} periods "
        f"({100.0 * covered / periods:.0f}% < {rule.min_coverage_percent:g}%)"
    )
    if window.gpus_reporting < window.gpus_expected:
        return reason + f"; only {window.gpus_reporting} of {window.gpus_expected} GPUs report"
    starts = set(window.starts)
    counts = {g: sum(1 for t in s if t in starts) for g, s in samples.utilisation.items()}
    gaps = sorted((periods - n, g) for g, n in counts.items() if 0 < n < periods)
    if gaps and len(counts) > 1:
        missing, gpu = gaps[-1]
        reason += f"; GPU {gpu} missing in {missing} of {periods} periods"
    return reason


def _minutes(delta: timedelta) -> int:
    return int(delta.total_seconds() // 60)
