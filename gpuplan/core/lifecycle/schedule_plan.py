"""What ``gpuplan schedule`` does with each instance now: stop, start, or nothing, and why.

Pure: instances, their idle verdicts, the policy's schedules, what earlier schedule runs
of this policy recorded (:class:`Mark`, from the ledger) and ``now`` come in; decisions
with reasons go out. The rules (docs/policy.md, "schedules"):

- An instance follows the schedule its tag names, else the default (``applies_to:
  all``), else none; ``off`` and an unknown name mean none (the latter said so).
- Exempt (``exempt_tag``, a snooze), managed and out-of-scope instances are left alone.
- At off-hours a running instance is stopped, unless a person started it during these
  off-hours: its cloud start time is after the off-hours began, or an earlier run of
  these off-hours saw it stopped (or stopped it) and it runs again. Such an instance is
  left running until the next off-hours, unless ``enforce_off_hours: true``.
- At on-hours a stopped instance is started only when the last schedule stop in the
  ledger is the last thing that happened to it: nobody started it since (no later run
  saw it running, no later start, no cloud start time after the stop). What a person
  stopped is never started.
- Stops go through the idle action's planner (:func:`gpuplan.core.lifecycle.plan.plan_one`):
  the same data-loss guard, one-time spot and capability checks, notice, cap and tags;
  the circuit breaker counts scheduled stops of instances whose metrics say *busy* (a
  schedule that would stop most of a working fleet is a wrong zone or wrong hours).
  Starts undo gpuplan's own stops: not capped, no breaker.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.idle import (
    REASON_TAG,
    STOP_AFTER_TAG,
    STOPPED_AT_TAG,
    IdleDecision,
    IdleVerdict,
    format_tag_time,
)
from gpuplan.core.lifecycle.instances import Action, Capability, GpuInstance, InstanceState
from gpuplan.core.lifecycle.plan import (
    ActionRule,
    Plan,
    PlannedAction,
    Step,
    apply_cap,
    breaker_reason,
    plan_one,
    running_surveyed,
)
from gpuplan.core.lifecycle.schedule_clock import Period, period_at
from gpuplan.core.policy.schedules import Schedules

NOTICE_TAG = "gpuplan-offhours-after"
"""The schedule's own notice tag (``stop-idle`` withdraws ``gpuplan-stop-after`` from a
busy instance; a scheduled stop is not about being busy)."""
STARTED_AT_TAG = "gpuplan-started-at"
STOPPED_STATES = frozenset({InstanceState.STOPPED, InstanceState.DEALLOCATED})
LEFT_ALONE = frozenset({IdleVerdict.EXEMPT, IdleVerdict.MANAGED})


class Event(StrEnum):
    """What an earlier schedule run recorded about an instance."""

    STOPPED = "stopped"
    """This policy's schedule stopped it (an applied run's action)."""
    STARTED = "started"
    """This policy's schedule started it."""
    SEEN_RUNNING = "seen running"
    SEEN_STOPPED = "seen stopped"


@dataclass(frozen=True)
class Mark:
    at: datetime
    event: Event


class Move(StrEnum):
    STOP = "stop"
    START = "start"
    NONE = "none"


@dataclass(frozen=True)
class ScheduleDecision:
    move: Move
    reason: str
    schedule: str | None = None
    period: Period | None = None


def decide(
    inst: GpuInstance,
    verdict: IdleDecision,
    schedules: Schedules,
    marks: Sequence[Mark],
    now: datetime,
    startable: frozenset[InstanceState] = STOPPED_STATES,
) -> ScheduleDecision:
    """The move for one instance (``marks``: its history, oldest first; ``startable``: the
    states its cloud's start brings back, e.g. a suspended Kubernetes Job)."""
    name, why = schedules.pick(inst.labels)
    if name is None:
        return ScheduleDecision(Move.NONE, why)
    schedule = schedules.named[name]
    period = period_at(schedule, now)
    said = f"schedule {name} ({why}): {period.describe(schedule)}"
    if verdict.verdict in LEFT_ALONE or _out_of_scope(verdict):
        return ScheduleDecision(Move.NONE, f"{verdict.reason}; {said}", name, period)
    if period.on:
        return _on_hours(inst, marks, said, name, period, startable)
    return _off_hours(inst, marks, said, name, period, schedules.enforce_off_hours)


def _out_of_scope(verdict: IdleDecision) -> bool:
    # A stopped instance is "out of scope" to the idle decision; labels are what count here.
    return verdict.verdict is IdleVerdict.OUT_OF_SCOPE and "labels" in verdict.reason


def _off_hours(
    inst: GpuInstance,
    marks: Sequence[Mark],
    said: str,
    name: str,
    period: Period,
    enforce: bool,
) -> ScheduleDecision:
    if inst.state is not InstanceState.RUNNING:
        return ScheduleDecision(Move.NONE, f"{inst.state.value}; {said}", name, period)
    since = period.since
    if not enforce and since is not None:
        started = inst.started_at
        if started is not None and started > since:
            return ScheduleDecision(
                Move.NONE,
                f"started at {started:%Y-%m-%d %H:%M}Z, during these off-hours: left running "
                f"until the next off-hours (enforce_off_hours: false); {said}",
                name,
                period,
            )
        earlier = [m for m in marks if m.at >= since and m.event in _DOWN]
        if earlier:
            return ScheduleDecision(
                Move.NONE,
                f"{earlier[-1].event.value} at {earlier[-1].at:%Y-%m-%d %H:%M}Z and running "
                f"again: a person started it during these off-hours; left running until the "
                f"next off-hours (enforce_off_hours: false); {said}",
                name,
                period,
            )
    return ScheduleDecision(Move.STOP, said, name, period)


_DOWN = frozenset({Event.STOPPED, Event.SEEN_STOPPED})
_UP = frozenset({Event.STARTED, Event.SEEN_RUNNING})


def _on_hours(
    inst: GpuInstance,
    marks: Sequence[Mark],
    said: str,
    name: str,
    period: Period,
    startable: frozenset[InstanceState],
) -> ScheduleDecision:
    if inst.state not in startable:
        return ScheduleDecision(Move.NONE, f"{inst.state.value}; {said}", name, period)
    ours = [m for m in marks if m.event is Event.STOPPED]
    if not ours:
        return ScheduleDecision(
            Move.NONE,
            f"{inst.state.value}, and not by gpuplan schedule (no stop in the ledger): a "
            f"person's stop is left alone; {said}",
            name,
            period,
        )
    stopped = ours[-1].at
    later = [m for m in marks if m.at > stopped and m.event in _UP]
    started = inst.started_at
    if later or (started is not None and started > stopped):
        return ScheduleDecision(
            Move.NONE,
            f"gpuplan schedule stopped it at {stopped:%Y-%m-%d %H:%M}Z, but it was started "
            f"again since and stopped by someone else: left alone; {said}",
            name,
            period,
        )
    return ScheduleDecision(
        Move.START,
        f"gpuplan schedule stopped it at {stopped:%Y-%m-%d %H:%M}Z (ledger); {said}",
        name,
        period,
    )


@dataclass(frozen=True)
class Row:
    """One instance as the schedule planner sees it."""

    instance: GpuInstance
    verdict: IdleDecision
    """The idle decision from the survey (busy, idle, unknown ...): for the breaker and
    the record; a scheduled stop does not need the instance to be idle."""
    capabilities: frozenset[Capability]
    decision: ScheduleDecision


def schedule_action(policy_action: Action) -> Action:
    """The action a scheduled stop takes: the idle action when it stops (stop,
    hibernate, suspend, deallocate) or only notifies; a schedule never terminates."""
    if policy_action in (Action.TERMINATE, Action.NONE):
        return Action.STOP
    return policy_action


def plan_schedule(
    rows: Sequence[Row], rule_for: Callable[[Provider], ActionRule], now: datetime
) -> Plan:
    """Planned actions for every row: stops capped (the rest deferred) or aborted by the
    breaker; starts as they are."""
    items = [_item(row, rule_for(row.instance.provider), now) for row in rows]
    if not items:
        return Plan(())
    first = rule_for(items[0].instance.provider)
    stops = [p for p in items if p.step is Step.ACT and p.do is not Action.START]
    busy = sum(1 for p in stops if p.decision.verdict is IdleVerdict.BUSY)
    tripped = breaker_reason(
        busy, running_surveyed(items), first.breaker_percent, first.breaker_min_actions
    )
    if tripped:
        tripped = tripped.replace("on utilisation alone or despite a live process", "while busy")
        return Plan(tuple(items), aborted=f"schedule {tripped}")
    capped = {
        id(before): after
        for before, after in zip(stops, apply_cap(stops, first.max_actions_per_run), strict=True)
    }
    return Plan(tuple(capped.get(id(p), p) for p in items))


def _item(row: Row, rule: ActionRule, now: datetime) -> PlannedAction:
    inst, d = row.instance, row.decision
    record = replace(row.verdict, reason=d.reason)
    if d.move is Move.START:
        return PlannedAction(
            inst,
            record,
            Action.START,
            Step.ACT,
            do=Action.START,
            note=f"on-hours: started again by schedule {d.schedule}",
            tags={STARTED_AT_TAG: format_tag_time(now)},
            untag=tuple(k for k in (STOPPED_AT_TAG, REASON_TAG) if k in inst.labels),
        )
    if d.move is Move.NONE:
        return PlannedAction(inst, record, Action.NONE, Step.NONE)
    rule = replace(
        rule, action=schedule_action(rule.action), reason_code=f"offhours-{d.schedule}"[:63]
    )
    view = _notice_view(inst)
    item = plan_one(view, IdleDecision(IdleVerdict.IDLE, d.reason), rule, now, row.capabilities)
    return replace(
        item,
        instance=inst,
        decision=record,
        tags=_renamed(item.tags),
        untag=tuple(NOTICE_TAG if k == STOP_AFTER_TAG else k for k in item.untag),
    )


def _notice_view(inst: GpuInstance) -> GpuInstance:
    """``inst`` as the idle planner should read it: the schedule's notice tag in the place
    of the idle notice tag (so the same notice logic runs on the schedule's own tag)."""
    labels = {k: v for k, v in inst.labels.items() if k != STOP_AFTER_TAG}
    if NOTICE_TAG in labels:
        labels[STOP_AFTER_TAG] = labels.pop(NOTICE_TAG)
    return inst.model_copy(update={"labels": labels})


def _renamed(tags: Mapping[str, str]) -> dict[str, str]:
    return {NOTICE_TAG if k == STOP_AFTER_TAG else k: v for k, v in tags.items()}
