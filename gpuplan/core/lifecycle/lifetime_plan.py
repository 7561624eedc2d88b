"""One plan for idle, lifetime and exemption rules: the idle plan, overlaid, then capped.

The idle plan (:func:`gpuplan.core.lifecycle.plan.plan_one` per instance) is made first and
the circuit breaker judged on it alone (it guards against broken metrics, and a lifetime
rule reads no metric). Then, per instance:

- a refused exemption (:mod:`gpuplan.core.lifecycle.exemptions`: too long, unreadable) not yet
  noticed is marked (``gpuplan-exempt-void-after`` tagged, the owner told); a notice tag
  left on a value fixed since is cleared;
- a valid exemption, a managed instance or one outside ``match_labels`` is left to the
  idle plan; otherwise a lifetime rule that is due (:func:`gpuplan.core.lifecycle.lifetimes.due`)
  takes the instance: notice first, the owner's snooze within ``max_snooze``, then
  ``stop`` (Azure: deallocate) or snapshot and ``terminate``, skipped with its reason when
  data would be lost without ``allow_data_loss`` or the cloud cannot snapshot.

The cap then counts every action alike, most dollars first. Pure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.actions import provider_action
from gpuplan.core.lifecycle.exemptions import VOID_AFTER_TAG, ExemptionState, judge, void_tag
from gpuplan.core.lifecycle.idle import REASON_TAG, STOPPED_AT_TAG, format_tag_time, parse_tag_time
from gpuplan.core.lifecycle.instances import Action, Capability, GpuInstance, label_mismatch
from gpuplan.core.lifecycle.lifetimes import (
    NOTICE_TAG,
    PARKED,
    Due,
    Limits,
    due,
    snooze_cut_short,
    snoozed,
)
from gpuplan.core.lifecycle.plan import (
    ActionRule,
    Plan,
    PlannedAction,
    SkipReason,
    Step,
    apply_cap,
    breaker,
    skip_reason,
)


@dataclass(frozen=True)
class Rules:
    """What the overlay needs from the policy (built by the use case)."""

    limits: Limits = field(default_factory=Limits)
    exempt_tag: str = "gpuplan-keep"
    exempt_max_days: int | None = None
    exempt_notice_minutes: int = 1440
    match_labels: Mapping[str, str] = field(default_factory=dict)


def plan_all(
    items: Sequence[PlannedAction],
    rule_for: Callable[[Provider], ActionRule],
    rules: Rules,
    now: datetime,
    capabilities: Mapping[str, frozenset[Capability]],
    can_snapshot: Mapping[str, bool],
) -> Plan:
    """The idle ``items`` with lifetime and exemption rules laid over them; breaker on
    the idle actions, cap on all (``capabilities``, ``can_snapshot``: per instance id)."""
    if not items:
        return Plan(())
    first = rule_for(items[0].instance.provider)
    tripped = breaker(items, first)
    merged = [
        overlay(
            p,
            rule_for(p.instance.provider),
            rules,
            now,
            capabilities.get(p.instance.instance_id, frozenset()),
            can_snapshot.get(p.instance.instance_id, False),
        )
        for p in items
    ]
    if tripped:
        return Plan(tuple(merged), aborted=tripped)
    return Plan(tuple(apply_cap(merged, first.max_actions_per_run)))


def overlay(
    item: PlannedAction,
    rule: ActionRule,
    rules: Rules,
    now: datetime,
    capabilities: frozenset[Capability],
    can_snapshot: bool,
) -> PlannedAction:
    """``item`` as the lifetime and exemption rules leave it."""
    inst = item.instance
    if inst.managed_by or label_mismatch(inst.labels, rules.match_labels):
        return item
    exemption = judge(inst.labels, rules.exempt_tag, now, rules.exempt_max_days)
    # A refused exemption matters where a rule could act: running, or parked with
    # stopped_for set. Elsewhere its notice would only be noise.
    matters = inst.state.bills_compute or (
        inst.state in PARKED and bool(rules.limits.stopped_for_days)
    )
    if exemption.state.needs_notice and exemption.void_after is None and matters:
        if item.step in (Step.NONE, Step.CLEAR):
            return replace(
                item,
                step=Step.MARK,
                planned_action=Action.NOTIFY,
                note="notice: no longer exempt after "
                f"{now + timedelta(minutes=rules.exempt_notice_minutes):%Y-%m-%d %H:%M}Z",
                tags=void_tag(now, rules.exempt_notice_minutes),
                untag=(),
                lifetime="exemption",
                notice_key=f"exemption:{value_key(inst.labels.get(rules.exempt_tag, ''))}",
            )
        return item
    if exemption.state is ExemptionState.VALID and VOID_AFTER_TAG in inst.labels:
        if item.step is Step.NONE:
            return replace(
                item, step=Step.CLEAR, note="exemption fixed: notice withdrawn",
                untag=(VOID_AFTER_TAG,), lifetime="exemption",
            )  # fmt: skip
        return item
    if exemption.state.exempts:
        return item
    return _lifetime(item, rule, rules.limits, now, capabilities, can_snapshot)


def value_key(value: str) -> str:
    """A short, stable key for a tag value (any characters, any length)."""
    return hashlib.sha256(value.encode("utf-8", "replace")).hexdigest()[:16]


def _lifetime(
    item: PlannedAction,
    rule: ActionRule,
    limits: Limits,
    now: datetime,
    capabilities: frozenset[Capability],
    can_snapshot: bool,
) -> PlannedAction:
    inst = item.instance
    found = due(inst, limits, now) if limits.any else None
    if isinstance(found, str):
        return _noted(item, found)
    if found is None:
        if NOTICE_TAG in inst.labels and item.step is Step.NONE:
            return replace(
                item, step=Step.CLEAR, note="no lifetime rule due: notice withdrawn",
                untag=(NOTICE_TAG,), lifetime="withdrawn",
            )  # fmt: skip
        return item
    if item.step is Step.ACT and found.action is Action.STOP:
        return item  # idle already stops it: one stop, the idle reason
    held = snoozed(inst, found, limits, now)
    if held is not None:
        return _noted(item, f"{found.reason}; {held}")
    base = replace(
        item,
        decision=replace(item.decision, reason=found.reason),
        planned_action=found.action,
        lifetime=found.rule.value,
        skip=None,
        warnings=(),
        tags={},
        untag=(),
    )
    notice = _notice(base, found, limits, now)
    if notice is not None:
        return notice
    return _act(base, found, rule, limits, now, capabilities, can_snapshot)


def _noted(item: PlannedAction, why: str) -> PlannedAction:
    """The item unchanged but for its reason, which now says why a rule waits."""
    reason = f"{item.decision.reason}; {why}" if item.decision.reason else why
    return replace(item, decision=replace(item.decision, reason=reason))


def _notice(base: PlannedAction, found: Due, limits: Limits, now: datetime) -> PlannedAction | None:
    if limits.notice_minutes <= 0:
        return None
    raw = base.instance.labels.get(NOTICE_TAG)
    after = parse_tag_time(raw) if raw is not None else None
    verb = "snapshot and terminate" if found.snapshot_first else found.action.value
    if after is None:
        until = now + timedelta(minutes=limits.notice_minutes)
        return replace(
            base,
            step=Step.MARK,
            note=f"notice: {verb} after {until:%Y-%m-%d %H:%M}Z ({found.rule.value})",
            tags={NOTICE_TAG: format_tag_time(until)},
            notice_key=f"{found.rule.value}:{found.since:%Y%m%dT%H%MZ}",
        )
    if now < after:
        return replace(base, step=Step.WAIT, note=f"notice runs until {after:%Y-%m-%d %H:%M}Z")
    return None


def _act(
    base: PlannedAction,
    found: Due,
    rule: ActionRule,
    limits: Limits,
    now: datetime,
    capabilities: frozenset[Capability],
    can_snapshot: bool,
) -> PlannedAction:
    inst = base.instance
    do = provider_action(inst.provider, found.action)
    skip = _refused(inst, found, do, rule, capabilities, can_snapshot)
    if skip is not None:
        return replace(base, step=Step.SKIP, note=skip[1], skip=skip[0])
    cut = snooze_cut_short(inst, found, limits, now)
    untag = tuple(t for t in (NOTICE_TAG,) if t in inst.labels)
    tags = (
        {STOPPED_AT_TAG: format_tag_time(now), REASON_TAG: found.code}
        if not found.snapshot_first
        else {}
    )
    warnings = tuple(w for w in (cut,) if w)
    return replace(
        base,
        step=Step.ACT,
        do=do,
        note=cut,
        tags=tags,
        untag=untag,
        warnings=warnings,
        snapshot_first=found.snapshot_first,
    )


def _refused(
    inst: GpuInstance,
    found: Due,
    do: Action,
    rule: ActionRule,
    capabilities: frozenset[Capability],
    can_snapshot: bool,
) -> tuple[SkipReason, str] | None:
    if found.snapshot_first:
        if not rule.allow_data_loss:
            return SkipReason.DATA_LOSS, (
                "stopped_for terminates the instance (its disks are snapshotted first); "
                "set idle.allow_data_loss: true to allow"
            )
        if not can_snapshot:
            return SkipReason.UNSUPPORTED, (
                f"{inst.provider.value} adapter cannot snapshot disks: not terminated"
            )
    return skip_reason(inst, do, rule, capabilities)
