"""Lifecycle planning: idle decisions in, planned steps with reasons out. Nothing acts here.

Promises:
- Only ``idle`` instances get an action; every other verdict is ``none`` with its reason.
- What the policy calls for (``planned_action``) is kept apart from what will be done:
  hibernate falls back to stop where the instance was not launched with hibernation
  (said so); a one-time spot instance is skipped unless the action is ``terminate``;
  an instance-store root cannot be stopped and is only terminated with
  ``allow_data_loss``; an action the provider cannot do is skipped.
- With ``notice_minutes`` > 0 the first idle run only tags ``gpuplan-stop-after`` and
  notifies; a later run acts once the notice has passed and the instance is still
  idle; activity returning withdraws the notice (the tag is removed).
- More would-be actions than ``max_actions_per_run`` abort the action phase.
- Scarce types (p5, p4d, H100/H200/B200 sizes) carry a warning: a restart may not find
  capacity.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from gpuplan.core.fleet import Action, Capability, GpuInstance
from gpuplan.core.idle import (
    REASON_TAG,
    STOP_AFTER_TAG,
    STOPPED_AT_TAG,
    IdleDecision,
    IdleVerdict,
    format_tag_time,
    parse_tag_time,
)

SCARCE_TYPE_PREFIXES = ("p5", "p4d", "p4de", "p6", "a3-", "a4-", "standard_nd96")
SCARCE_GPUS = frozenset({"H100", "H200", "B200", "GB200"})
_NEEDS = {
    Action.STOP: Capability.STOP,
    Action.HIBERNATE: Capability.HIBERNATE,
    Action.SUSPEND: Capability.SUSPEND,
    Action.DEALLOCATE: Capability.DEALLOCATE,
    Action.TERMINATE: Capability.TERMINATE,
}


class Step(StrEnum):
    """What the executor will do with one instance."""

    NONE = "none"
    ACT = "act"
    """Carry out ``do`` (stop, hibernate, terminate ...), then tag when and why."""
    MARK = "mark"
    """Notice period starts: tag ``gpuplan-stop-after`` and notify."""
    WAIT = "wait"
    """Notice period still running."""
    CLEAR = "clear"
    """Activity returned during a notice: remove the tag."""
    NOTIFY = "notify"
    SKIP = "skip"


@dataclass(frozen=True)
class ActionRule:
    """The ``idle:`` settings that shape actions (built from the policy by the use case)."""

    action: Action = Action.STOP
    notice_minutes: int = 0
    allow_data_loss: bool = False
    max_actions_per_run: int = 10
    reason_code: str = "idle-60m-lt5pct"


@dataclass(frozen=True)
class PlannedAction:
    instance: GpuInstance
    decision: IdleDecision
    planned_action: Action
    """What the policy calls for (``none`` unless idle)."""
    step: Step
    do: Action = Action.NONE
    """The provider action the executor will call when ``step`` is ACT."""
    note: str = ""
    """Why skipped, why a fallback, what a notice means."""
    warnings: tuple[str, ...] = ()
    tags: Mapping[str, str] = field(default_factory=dict)
    untag: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    items: tuple[PlannedAction, ...]
    aborted: str | None = None
    """Why the action phase will not run (too many would-be actions)."""

    @property
    def would_act(self) -> int:
        return sum(1 for p in self.items if p.step is Step.ACT)


def plan(
    decisions: Iterable[tuple[GpuInstance, IdleDecision, frozenset[Capability]]],
    rule: ActionRule,
    now: datetime,
) -> Plan:
    """A plan for every instance; aborted when it would act on too many."""
    items = tuple(plan_one(inst, d, rule, now, caps) for inst, d, caps in decisions)
    result = Plan(items)
    if result.would_act > rule.max_actions_per_run:
        return Plan(
            items,
            aborted=(
                f"aborted: {result.would_act} instances would be acted on, more than "
                f"max_actions_per_run = {rule.max_actions_per_run}; nothing was done"
            ),
        )
    return result


def plan_one(
    inst: GpuInstance,
    decision: IdleDecision,
    rule: ActionRule,
    now: datetime,
    capabilities: frozenset[Capability],
) -> PlannedAction:
    if decision.verdict is not IdleVerdict.IDLE:
        if STOP_AFTER_TAG in inst.labels and decision.verdict in (
            IdleVerdict.BUSY,
            IdleVerdict.EXEMPT,
            IdleVerdict.GRACE,
        ):
            return PlannedAction(
                inst,
                decision,
                Action.NONE,
                Step.CLEAR,
                note="activity returned: notice withdrawn",
                untag=(STOP_AFTER_TAG,),
            )
        return PlannedAction(inst, decision, Action.NONE, Step.NONE)
    if rule.action is Action.NOTIFY:
        return PlannedAction(inst, decision, Action.NOTIFY, Step.NOTIFY, note="notify only")
    notice = _notice(inst, decision, rule, now)
    if notice is not None:
        return notice
    return _act(inst, decision, rule, now, capabilities)


def _notice(
    inst: GpuInstance, decision: IdleDecision, rule: ActionRule, now: datetime
) -> PlannedAction | None:
    if rule.notice_minutes <= 0:
        return None
    raw = inst.labels.get(STOP_AFTER_TAG)
    after = parse_tag_time(raw) if raw is not None else None
    if after is None:
        until = now + timedelta(minutes=rule.notice_minutes)
        return PlannedAction(
            inst,
            decision,
            rule.action,
            Step.MARK,
            note=f"notice: {rule.action.value} after {until:%Y-%m-%d %H:%M}Z if still idle",
            tags={STOP_AFTER_TAG: format_tag_time(until)},
        )
    if now < after:
        return PlannedAction(
            inst,
            decision,
            rule.action,
            Step.WAIT,
            note=f"notice runs until {after:%Y-%m-%d %H:%M}Z",
        )
    return None


def _act(
    inst: GpuInstance,
    decision: IdleDecision,
    rule: ActionRule,
    now: datetime,
    capabilities: frozenset[Capability],
) -> PlannedAction:
    planned = rule.action
    do, note = planned, ""
    if planned is Action.HIBERNATE and inst.attributes.get("hibernation") != "true":
        do, note = Action.STOP, "not launched with hibernation: stopping instead"
    skip = _skip_reason(inst, do, rule, capabilities)
    if skip:
        return PlannedAction(inst, decision, planned, Step.SKIP, note=skip)
    tags = {STOPPED_AT_TAG: format_tag_time(now), REASON_TAG: rule.reason_code}
    untag = (STOP_AFTER_TAG,) if STOP_AFTER_TAG in inst.labels else ()
    return PlannedAction(
        inst,
        decision,
        planned,
        Step.ACT,
        do=do,
        note=note,
        warnings=_warnings(inst, do),
        tags=tags,
        untag=untag,
    )


def _skip_reason(
    inst: GpuInstance, do: Action, rule: ActionRule, capabilities: frozenset[Capability]
) -> str:
    attrs = inst.attributes
    if attrs.get("spot_request_type") == "one-time" and do is not Action.TERMINATE:
        return "one-time spot instance: it cannot be stopped (only action: terminate ends it)"
    if attrs.get("root_device_type") == "instance-store":
        if do is not Action.TERMINATE:
            return "instance-store root device: the instance cannot be stopped"
        if not rule.allow_data_loss:
            return "terminating erases the instance-store root; set allow_data_loss: true"
    if attrs.get("local_ssd") == "true" and not rule.allow_data_loss:
        return f"local SSD data is lost on {do.value}; set allow_data_loss: true to allow"
    needed = _NEEDS.get(do)
    if needed is None or needed not in capabilities:
        return f"{inst.provider.value} adapter cannot {do.value} instances"
    return ""


def _warnings(inst: GpuInstance, do: Action) -> tuple[str, ...]:
    out: list[str] = []
    kind = inst.instance_type.lower()
    if kind.startswith(SCARCE_TYPE_PREFIXES) or (inst.gpu or "") in SCARCE_GPUS:
        out.append(f"{inst.instance_type} is scarce: a restart may not find capacity")
    store = int(inst.attributes.get("instance_store_gb", "0") or 0)
    if store and do in (Action.STOP, Action.HIBERNATE):
        out.append(f"{store} GB of instance-store (NVMe) data is erased on {do.value}")
    return tuple(out)
