"""Lifecycle planning: idle decisions in, planned steps with reasons out. Nothing acts here.

Promises:
- Only ``idle`` instances get an action; every other verdict is ``none`` with its reason.
- Three names, three things: ``planned_action`` is what the policy calls for,
  ``do`` (the provider call) what the executor will ask the cloud for, and
  :class:`Outcome` what happened.
- Hibernate falls back to stop where the instance was not launched with hibernation
  (said so); a one-time spot instance is skipped unless the action is ``terminate``;
  an instance-store root cannot be stopped; any local instance storage (AWS instance
  store on any device, GCP local SSD, Azure temporary disk) is erased by every acting
  action, so such an instance is skipped unless ``allow_data_loss``; an action the
  provider cannot do is skipped.
- With ``notice_minutes`` > 0 the first idle run only tags ``gpuplan-stop-after`` and
  notifies; a later run acts once the notice has passed and the instance is still
  idle; activity returning withdraws the notice (the tag is removed).
- The cap defers, the breaker trips: at most ``max_actions_per_run`` instances are acted
  on per run, most dollars at stake first (hourly price, then idle minutes); the rest
  are deferred to the next run with the reason ("deferred: cap 10 reached"). The circuit
  breaker aborts the whole action phase when the would-be actions (before the cap) that
  are not idle on every signal reach ``breaker_percent`` of the surveyed running GPU
  instances and number at least ``breaker_min_actions``: the signature of broken
  metrics or a wrong rule. Instances idle on every signal (GPU memory and CPU quiet too)
  do not count: a team's forgotten dev boxes are not an anomaly.
- Scarce types (p5, p4d, H100/H200/B200 sizes) carry a warning: a restart may not find
  capacity.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from enum import StrEnum

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.idle import (
    REASON_TAG,
    STOP_AFTER_TAG,
    STOPPED_AT_TAG,
    IdleDecision,
    IdleVerdict,
    format_tag_time,
    parse_tag_time,
)
from gpuplan.core.lifecycle.instances import NEEDS, Action, Capability, GpuInstance, InstanceState

SCARCE_TYPE_PREFIXES = ("p5", "p4d", "p4de", "p6", "a3-", "a4-", "standard_nd96")
SCARCE_GPUS = frozenset({"H100", "H200", "B200", "GB200"})


class Outcome(StrEnum):
    """What happened to one instance in a run (the ledger's and the JSON's ``action``)."""

    NONE = "none"
    SKIPPED = "skipped"
    FAILED = "failed"
    NOTIFIED = "notified"
    STOPPED = "stopped"
    HIBERNATED = "hibernated"
    SUSPENDED = "suspended"
    DEALLOCATED = "deallocated"
    TERMINATED = "terminated"
    STARTED = "started"
    """Started again (``gpuplan schedule``, on-hours)."""
    DEFERRED = "deferred"
    """Idle and due, left for the next run: the run's action cap was reached."""

    @property
    def acted(self) -> bool:
        """The cloud carried the action out."""
        return self in DONE.values()


DONE = {
    Action.STOP: Outcome.STOPPED,
    Action.HIBERNATE: Outcome.HIBERNATED,
    Action.SUSPEND: Outcome.SUSPENDED,
    Action.DEALLOCATE: Outcome.DEALLOCATED,
    Action.TERMINATE: Outcome.TERMINATED,
    Action.START: Outcome.STARTED,
}
"""The outcome of each provider call that succeeded."""


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
    DEFER = "defer"
    """Due, but the run's cap was reached: the next run acts (most dollars first)."""


class SkipReason(StrEnum):
    """Why an idle instance is left running (the summary counts each on its own)."""

    SPOT_ONE_TIME = "one-time spot"
    ROOT_INSTANCE_STORE = "instance-store root"
    DATA_LOSS = "data loss"
    UNSUPPORTED = "not supported"
    REFUSED = "refused"
    """The unit may never be touched (:attr:`RiskFacts.refused` says why)."""


@dataclass(frozen=True)
class ActionRule:
    """The ``idle:`` settings that shape actions (built from the policy by the use case)."""

    action: Action = Action.STOP
    notice_minutes: int = 0
    allow_data_loss: bool = False
    max_actions_per_run: int = 10
    breaker_percent: float = 80.0
    breaker_min_actions: int = 3
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
    skip: SkipReason | None = None
    """Set when ``step`` is SKIP."""
    warnings: tuple[str, ...] = ()
    tags: Mapping[str, str] = field(default_factory=dict)
    untag: tuple[str, ...] = ()
    lifetime: str = ""
    """The lifetime rule this item comes from (:mod:`gpuplan.core.lifecycle.lifetimes`); "" for the
    idle rule. The executor re-checks it instead of idleness."""
    snapshot_first: bool = False
    """Snapshot the instance's disks before the action (``stopped_for``'s terminate)."""
    notice_key: str = ""
    """What makes a notice (``MARK``) the same notice again: the rule and when it fell due
    (an owner is told once per key, :mod:`gpuplan.core.lifecycle.owner_notice`); "" for idle."""


@dataclass(frozen=True)
class Plan:
    items: tuple[PlannedAction, ...]
    aborted: str | None = None
    """Why the action phase will not run (the circuit breaker tripped)."""

    @property
    def would_act(self) -> int:
        return sum(1 for p in self.items if p.step is Step.ACT)

    @property
    def deferred(self) -> int:
        return sum(1 for p in self.items if p.step is Step.DEFER)


def plan(
    decisions: Iterable[tuple[GpuInstance, IdleDecision, frozenset[Capability]]],
    rule: ActionRule | Callable[[Provider], ActionRule],
    now: datetime,
) -> Plan:
    """A plan for every instance: capped (the rest deferred), or aborted by the breaker.

    ``rule`` may differ per cloud (Azure's stop is a deallocate); the cap and the
    breaker count across all of them (every rule carries the policy's one cap).
    """
    rule_for = rule if callable(rule) else (lambda _p, r=rule: r)
    items = [plan_one(inst, d, rule_for(inst.provider), now, caps) for inst, d, caps in decisions]
    if not items:
        return Plan(())
    first = rule_for(items[0].instance.provider)
    tripped = breaker(items, first)
    if tripped:
        return Plan(tuple(items), aborted=tripped)
    return Plan(tuple(apply_cap(items, first.max_actions_per_run)))


def running_surveyed(items: Sequence[PlannedAction]) -> int:
    """Running GPU instances in the survey: what the breaker's share is a share of."""
    return sum(1 for p in items if p.instance.state is InstanceState.RUNNING)


def breaker(items: Sequence[PlannedAction], rule: ActionRule) -> str | None:
    """Why the circuit breaker trips, or None: too many would-be actions at once that
    rest on utilisation alone or go against a live process (see :func:`counted`)."""
    acting = [p.decision for p in items if p.step is Step.ACT]
    return breaker_reason(
        counted(acting), running_surveyed(items), rule.breaker_percent, rule.breaker_min_actions
    )


def counted(due: Iterable[IdleDecision]) -> int:
    """The would-be actions the breaker counts: all but those idle on every signal.

    An instance whose GPU memory is below the floor and whose CPU is quiet, both
    reported, is idle by three signals that break apart (an agent failing zeroes one
    series, not all three) and is what a forgotten fleet looks like; the rest (GPUs quiet
    while a process holds memory or the CPU works, or utilisation alone) is what broken
    GPU metrics look like, and what the breaker is for.
    """
    return sum(1 for d in due if not d.every_signal_quiet)


def breaker_reason(acting: int, running: int, percent: float, min_actions: int) -> str | None:
    """The breaker on counts alone (the simulator replays it with this same function):
    it trips at ``percent`` of the running instances or more (inclusive)."""
    if acting < min_actions or acting * 100 < percent * running:
        return None
    share = 100.0 * acting / running if running else 100.0
    return (
        f"circuit breaker: {acting} of {running} running GPU instances ({share:.0f}%) would "
        f"be acted on on utilisation alone or despite a live process, at or above "
        f"breaker_percent = {percent:g}%; nothing was done (broken metrics or a wrong rule?)"
    )


def at_stake(item: PlannedAction) -> tuple[Decimal, int, str]:
    """Sort key, most dollars at stake first: hourly price, then idle minutes, then id."""
    price = item.instance.hourly_usd or Decimal(0)
    return (-price, -(item.decision.idle_minutes or 0), item.instance.instance_id)


def apply_cap(items: Sequence[PlannedAction], cap: int) -> list[PlannedAction]:
    """The first ``cap`` actions by dollars at stake act; the rest are deferred."""
    acting = sorted((p for p in items if p.step is Step.ACT), key=at_stake)
    late = {id(p) for p in acting[cap:]}
    note = f"deferred: cap {cap} reached (max_actions_per_run); the next run acts"
    return [
        replace(p, step=Step.DEFER, do=Action.NONE, note=note, tags={}, untag=())
        if id(p) in late
        else p
        for p in items
    ]


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
    if inst.risk.refused:  # before any notice: a refused unit gets no tag either
        why = f"refused: {inst.risk.refused}"
        return PlannedAction(
            inst, decision, rule.action, Step.SKIP, note=why, skip=SkipReason.REFUSED
        )
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
    if planned is Action.HIBERNATE and not inst.risk.hibernation_enabled:
        do, note = Action.STOP, "not launched with hibernation: stopping instead"
    skip = _skip_reason(inst, do, rule, capabilities)
    if skip is not None:
        return PlannedAction(inst, decision, planned, Step.SKIP, note=skip[1], skip=skip[0])
    tags = {STOPPED_AT_TAG: format_tag_time(now), REASON_TAG: rule.reason_code}
    if inst.risk.undo:
        note = "; ".join(filter(None, (note, f"undo: {inst.risk.undo}")))
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


def skip_reason(
    inst: GpuInstance, do: Action, rule: ActionRule, capabilities: frozenset[Capability]
) -> tuple[SkipReason, str] | None:
    """Why ``do`` is left undone on ``inst`` (a one-time spot, an instance-store root, data
    it would erase without ``allow_data_loss``, a call the adapter cannot make), or None."""
    return _skip_reason(inst, do, rule, capabilities)


def _skip_reason(
    inst: GpuInstance, do: Action, rule: ActionRule, capabilities: frozenset[Capability]
) -> tuple[SkipReason, str] | None:
    risk = inst.risk
    if risk.refused:
        return SkipReason.REFUSED, f"refused: {risk.refused}"
    if risk.spot_one_time and do is not Action.TERMINATE:
        return SkipReason.SPOT_ONE_TIME, (
            "one-time spot instance: it cannot be stopped (only action: terminate ends it)"
        )
    if risk.root_instance_store and do is not Action.TERMINATE:
        return SkipReason.ROOT_INSTANCE_STORE, (
            "instance-store root device: the instance cannot be stopped"
        )
    erased = risk.erased_by(do)
    if erased and not rule.allow_data_loss:
        return SkipReason.DATA_LOSS, (
            f"{do.value} erases {erased}; set allow_data_loss: true to allow"
        )
    needed = NEEDS.get(do)
    if needed is None or needed not in capabilities:
        return SkipReason.UNSUPPORTED, f"{inst.provider.value} adapter cannot {do.value} instances"
    return None


def _warnings(inst: GpuInstance, do: Action) -> tuple[str, ...]:
    out: list[str] = []
    kind = inst.instance_type.lower()
    if kind.startswith(SCARCE_TYPE_PREFIXES) or (inst.gpu or "") in SCARCE_GPUS:
        out.append(f"{inst.instance_type} is scarce: a restart may not find capacity")
    erased = inst.risk.erased_by(do)
    if erased:
        out.append(f"{do.value} erases {erased} (allow_data_loss: true)")
    return tuple(out)
