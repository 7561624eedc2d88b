"""The idle decision: is this GPU instance idle, busy, or can we not tell?

Pure: samples, start time, labels, the rule and ``now`` come in; a verdict with a reason
goes out. The rules, from what went wrong for others (DOMAIN.md section 6):

- Per period, the busiest GPU of the instance counts (one busy GPU = a busy instance).
- A period is *covered* only when every GPU of the instance reported in it. Missing or
  thin data is ``unknown``, never idle.
- ``idle`` only when coverage >= ``min_coverage_percent`` and every period's busiest GPU
  is below ``threshold_percent`` over the whole window. Any sample at or above the
  threshold makes the instance ``busy``, whatever the coverage.
- Boot grace after launch or start; the exempt tag (any value) and an unexpired
  ``gpuplan-snooze-until`` tag exempt; managed instances are never ours to stop.

Tag values gpuplan writes are valid on all three clouds: ``20261202t101500z``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from gpuplan.core.fleet import GpuSamples, InstanceState

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
class IdleRule:
    """The ``idle:`` settings the decision needs (built from the policy by the use case)."""

    threshold_percent: float = 5
    window_minutes: int = 60
    period_minutes: int = 5
    min_coverage_percent: float = 80
    grace_minutes: int = 20
    exempt_tag: str = "gpuplan-keep"
    match_labels: Mapping[str, str] = field(default_factory=dict)

    @property
    def code(self) -> str:
        """Short reason code for tags: ``idle-60m-lt5pct``."""
        threshold = f"{self.threshold_percent:g}".replace(".", "p")
        return f"idle-{self.window_minutes}m-lt{threshold}pct"


@dataclass(frozen=True)
class IdleDecision:
    """A verdict with its reason and the figures behind it."""

    verdict: IdleVerdict
    reason: str
    coverage_percent: float | None = None
    max_percent: float | None = None
    mean_percent: float | None = None
    idle_minutes: int | None = None
    """Minutes of trailing covered periods below the threshold (within the window)."""


def format_tag_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(_TAG_TIME)


def parse_tag_time(text: str) -> datetime | None:
    """A tag time (``20261202t101500z``, any case), or None when unreadable."""
    try:
        return datetime.strptime(text.strip().lower(), _TAG_TIME).replace(tzinfo=UTC)
    except ValueError:
        return None


def window_bounds(rule: IdleRule, now: datetime) -> tuple[datetime, datetime]:
    """(start, end) of the window, aligned to period boundaries; the open period is out."""
    period = rule.period_minutes * 60
    stamp = math.floor(now.timestamp() / period) * period
    end = datetime.fromtimestamp(stamp, tz=UTC)
    return end - timedelta(minutes=rule.window_minutes), end


def period_starts(rule: IdleRule, now: datetime) -> list[datetime]:
    start, end = window_bounds(rule, now)
    step = timedelta(minutes=rule.period_minutes)
    out: list[datetime] = []
    while start < end:
        out.append(start)
        start += step
    return out


def decide(
    samples: GpuSamples | None,
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
    return _from_samples(samples or {}, rule=rule, now=now, gpu_count=gpu_count)


def _before_data(
    *,
    started_at: datetime | None,
    labels: Mapping[str, str],
    state: InstanceState,
    rule: IdleRule,
    now: datetime,
    managed_by: str | None,
) -> IdleDecision | None:
    missing = {k: v for k, v in rule.match_labels.items() if labels.get(k) != v}
    if missing:
        wanted = ", ".join(f"{k}={v}" for k, v in sorted(missing.items()))
        return IdleDecision(IdleVerdict.OUT_OF_SCOPE, f"labels do not match the policy ({wanted})")
    if state is not InstanceState.RUNNING and state is not InstanceState.PENDING:
        return IdleDecision(IdleVerdict.OUT_OF_SCOPE, f"{state.value}: not running")
    if managed_by:
        return IdleDecision(
            IdleVerdict.MANAGED,
            f"managed by {managed_by}: stopping it would only trigger a replacement",
        )
    if rule.exempt_tag in labels:
        return IdleDecision(IdleVerdict.EXEMPT, f"exempt: tag {rule.exempt_tag} is set")
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
    samples: GpuSamples, *, rule: IdleRule, now: datetime, gpu_count: float
) -> IdleDecision:
    periods = period_starts(rule, now)
    window = set(periods)
    in_window = {gpu: {t: v for t, v in s.items() if t in window} for gpu, s in samples.items()}
    values = [v for s in in_window.values() for v in s.values()]
    if not values:
        return IdleDecision(
            IdleVerdict.UNKNOWN,
            f"no GPU metrics in the last {rule.window_minutes} min: "
            "install or fix the GPU metrics agent",
            coverage_percent=0.0,
        )
    busiest = [max((s[t] for s in in_window.values() if t in s), default=None) for t in periods]
    expected = max(math.ceil(gpu_count), len(in_window))
    covered = [
        len(in_window) == expected and all(t in s for s in in_window.values()) for t in periods
    ]
    coverage = 100.0 * sum(covered) / len(periods)
    known = [b for b in busiest if b is not None]
    peak = max(known)
    stats = IdleDecision(
        IdleVerdict.IDLE,
        f"busiest GPU below {rule.threshold_percent:g}% for {rule.window_minutes} min "
        f"(max {peak:g}%, coverage {coverage:.0f}%)",
        coverage_percent=coverage,
        max_percent=peak,
        mean_percent=sum(known) / len(known),
        idle_minutes=_trailing_idle(busiest, covered, rule),
    )
    if peak >= rule.threshold_percent:
        when = periods[busiest.index(peak)]
        reason = (
            f"busiest GPU at {peak:g}% at {when:%H:%M}Z (threshold {rule.threshold_percent:g}%)"
        )
        return replace(stats, verdict=IdleVerdict.BUSY, reason=reason)
    if coverage < rule.min_coverage_percent:
        reason = _thin_reason(in_window, sum(covered), len(periods), expected, rule)
        return replace(stats, verdict=IdleVerdict.UNKNOWN, reason=reason)
    return stats


def _thin_reason(
    in_window: Mapping[str, Mapping[datetime, float]],
    covered: int,
    periods: int,
    expected: int,
    rule: IdleRule,
) -> str:
    reason = (
        f"thin data: every GPU reported in {covered} of {periods} periods "
        f"({100.0 * covered / periods:.0f}% < {rule.min_coverage_percent:g}%)"
    )
    if len(in_window) < expected:
        return reason + f"; only {len(in_window)} of {expected} GPUs report"
    gaps = sorted((periods - len(v), g) for g, v in in_window.items() if len(v) < periods)
    if gaps and len(in_window) > 1:
        missing, gpu = gaps[-1]
        reason += f"; GPU {gpu} missing in {missing} of {periods} periods"
    return reason


def _trailing_idle(busiest: list[float | None], covered: list[bool], rule: IdleRule) -> int:
    count = 0
    for value, ok in zip(reversed(busiest), reversed(covered), strict=True):
        if not ok or value is None or value >= rule.threshold_percent:
            break
        count += 1
    return count * rule.period_minutes


def _minutes(delta: timedelta) -> int:
    return int(delta.total_seconds() // 60)
