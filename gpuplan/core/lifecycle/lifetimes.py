"""Lifetimes: how long an instance may run, stay stopped, or live, whatever its load.

Three rules (``lifetimes:`` in the policy), each judged on facts the listing carries:

- ``max_runtime``: a running instance whose current run started (``started_at``) longer
  ago than this is stopped, busy or not (dstack's ``max_duration``);
- ``expires_tag``: a running instance whose tag (``gpuplan-expires: 2026-12-31``) names a
  day that has ended is stopped;
- ``stopped_for_days``: an instance stopped longer than this has its disks snapshotted and
  is terminated (opt-in; only with ``idle.allow_data_loss``). When it was stopped comes
  from the cloud (``attributes["stopped_at"]``: EC2's state transition time, GCP's
  ``lastStopTimestamp``) or from gpuplan's own ``gpuplan-stopped-at`` tag; unknown means
  it is left alone, never guessed.

A rule that is due first gives notice when ``notice_minutes`` > 0 (``gpuplan-lifetime-
after`` tagged, the owner told), then acts once the notice has run out. The owner may
snooze (``gpuplan snooze``): honoured up to ``max_snooze`` past the moment the rule fell
due, never longer. Pure: ``now`` comes in; the plan items go through the same cap,
lease, ledger and re-check as idle actions (:mod:`gpuplan.core.lifecycle.lifetime_plan`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from gpuplan.core.lifecycle.exemptions import ends_at
from gpuplan.core.lifecycle.idle import SNOOZE_TAG, STOPPED_AT_TAG, parse_tag_time
from gpuplan.core.lifecycle.instances import Action, GpuInstance, InstanceState

NOTICE_TAG = "gpuplan-lifetime-after"
"""A lifetime rule's notice: the instance is acted on after this time (``20261202t101500z``)."""
STOPPED_AT_ATTRIBUTE = "stopped_at"
"""``GpuInstance.attributes`` key: when the cloud says the instance stopped (ISO 8601)."""


PARKED = (InstanceState.STOPPED, InstanceState.DEALLOCATED, InstanceState.SUSPENDED)
"""States ``stopped_for`` counts as stopped: compute not billed, disks (and addresses) are."""


class LifetimeRule(StrEnum):
    """Which lifetime rule an action comes from (the ledger's reason code and notices)."""

    MAX_RUNTIME = "max-runtime"
    EXPIRES = "expires"
    STOPPED_FOR = "stopped-for"


@dataclass(frozen=True)
class Limits:
    """The ``lifetimes:`` settings (built from the policy by the use case)."""

    max_runtime_minutes: int | None = None
    stopped_for_days: int | None = None
    expires_tag: str | None = None
    notice_minutes: int = 0
    max_snooze_minutes: int = 0

    @property
    def any(self) -> bool:
        return bool(self.max_runtime_minutes or self.stopped_for_days or self.expires_tag)


@dataclass(frozen=True)
class Due:
    """A rule that applies to an instance now: what it calls for, and from when."""

    rule: LifetimeRule
    reason: str
    action: Action
    """``stop`` (running instances) or ``terminate`` (snapshot first)."""
    since: datetime
    """When the rule fell due (snoozes count from here)."""

    @property
    def snapshot_first(self) -> bool:
        return self.action is Action.TERMINATE

    @property
    def code(self) -> str:
        """The reason code tagged on the instance (``gpuplan-reason``)."""
        return f"lifetime-{self.rule.value}"


def stopped_since(inst: GpuInstance) -> datetime | None:
    """When the instance stopped: the cloud's time, else gpuplan's own tag; None: unknown."""
    raw = inst.attributes.get(STOPPED_AT_ATTRIBUTE)
    if raw:
        try:
            found = datetime.fromisoformat(raw)
        except ValueError:
            found = None
        if found is not None:
            return found if found.tzinfo else found.replace(tzinfo=UTC)
    tagged = inst.labels.get(STOPPED_AT_TAG)
    return parse_tag_time(tagged) if tagged else None


def _hours(span: timedelta) -> str:
    hours = span.total_seconds() / 3600
    return f"{hours / 24:.1f} days" if hours >= 48 else f"{hours:.1f} h"


def due(inst: GpuInstance, limits: Limits, now: datetime) -> Due | str | None:
    """The rule due on ``inst`` now; a string: a rule would apply but a fact is missing
    (said why, nothing done); None: no rule applies."""
    if inst.state is InstanceState.RUNNING:
        return _running(inst, limits, now)
    if inst.state in PARKED and limits.stopped_for_days:
        since = stopped_since(inst)
        if since is None:
            return (
                "stopped_for: when it stopped is unknown (no stop time from the cloud and no "
                f"{STOPPED_AT_TAG} tag); left alone"
            )
        limit = timedelta(days=limits.stopped_for_days)
        if now - since > limit:
            return Due(
                LifetimeRule.STOPPED_FOR,
                f"stopped_for: stopped {_hours(now - since)} (since {since:%Y-%m-%d}), over "
                f"{limits.stopped_for_days} days: snapshot its disks, then terminate",
                Action.TERMINATE,
                since + limit,
            )
    return None


def _running(inst: GpuInstance, limits: Limits, now: datetime) -> Due | str | None:
    if limits.expires_tag and (raw := inst.labels.get(limits.expires_tag)) is not None:
        end = ends_at(raw)[1]
        if end is None:
            return f"{limits.expires_tag}={raw[:64]!r} is not a date (2026-12-31); not honoured"
        if now >= end:
            return Due(
                LifetimeRule.EXPIRES,
                f"expires: {limits.expires_tag}={raw.strip()[:64]} has passed",
                Action.STOP,
                end,
            )
    if limits.max_runtime_minutes:
        if inst.started_at is None:
            return "max_runtime: start time unknown; left alone"
        limit = timedelta(minutes=limits.max_runtime_minutes)
        ran = now - inst.started_at
        if ran > limit:
            return Due(
                LifetimeRule.MAX_RUNTIME,
                f"max_runtime: running {_hours(ran)}, over {_hours(limit)} (busy or not)",
                Action.STOP,
                inst.started_at + limit,
            )
    return None


def snoozed(inst: GpuInstance, found: Due, limits: Limits, now: datetime) -> str | None:
    """Why a due rule waits for the owner's snooze; None: no snooze holds it.

    A snooze counts up to ``max_snooze`` past the moment the rule fell due."""
    raw = inst.labels.get(SNOOZE_TAG)
    until = parse_tag_time(raw) if raw else None
    if until is None or now >= until:
        return None
    cap = found.since + timedelta(minutes=limits.max_snooze_minutes)
    if now >= cap:
        return None
    if until > cap:
        return (
            f"snoozed until {until:%Y-%m-%d %H:%M}Z, held only to {cap:%Y-%m-%d %H:%M}Z "
            f"(lifetimes.max_snooze)"
        )
    return f"snoozed until {until:%Y-%m-%d %H:%M}Z"


def snooze_cut_short(inst: GpuInstance, found: Due, limits: Limits, now: datetime) -> str:
    """A snooze the limit overrides now (said with the action), or ""."""
    raw = inst.labels.get(SNOOZE_TAG)
    until = parse_tag_time(raw) if raw else None
    if until is None or now >= until:
        return ""
    return (
        f"snooze until {until:%Y-%m-%d %H:%M}Z not honoured past lifetimes.max_snooze "
        f"({limits.max_snooze_minutes} min after the rule fell due)"
    )
