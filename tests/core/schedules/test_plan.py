"""The schedule planner, pure: which move for which instance, and the act path's rules
(data-loss guard, notice with its own tag, cap, breaker on busy instances)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.idle import IdleDecision, IdleVerdict
from gpuplan.core.lifecycle.instances import (
    Action,
    Capability,
    GpuInstance,
    InstanceState,
    RiskFacts,
)
from gpuplan.core.lifecycle.plan import ActionRule, Step
from gpuplan.core.lifecycle.schedule_plan import (
    NOTICE_TAG,
    Event,
    Mark,
    Move,
    Row,
    decide,
    plan_schedule,
    schedule_action,
)
from gpuplan.core.policy.schedules import Schedules

EVENING = datetime(2026, 12, 2, 19, 30, tzinfo=UTC)  # Wed 20:30 Berlin
OFF_SINCE = datetime(2026, 12, 2, 18, 0, tzinfo=UTC)
MORNING = datetime(2026, 12, 3, 7, 30, tzinfo=UTC)
ALL = frozenset(Capability)
UNKNOWN = IdleDecision(IdleVerdict.UNKNOWN, "no GPU metrics")
BUSY = IdleDecision(IdleVerdict.BUSY, "busy: 87%")
SCHEDULES = Schedules.model_validate(
    {"named": {"office": {"timezone": "Europe/Berlin"}}, "applies_to": "all",
     "default": "office"}
)  # fmt: skip


def inst(
    iid: str = "i-1",
    state: InstanceState = InstanceState.RUNNING,
    started: datetime = EVENING - timedelta(days=3),
    **labels: str,
) -> GpuInstance:
    return GpuInstance(
        provider=Provider.AWS, account="1", region="eu-central-1", instance_id=iid,
        instance_type="p5.48xlarge", state=state, started_at=started, labels=labels,
        hourly_usd=Decimal("55"),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("instance", "verdict", "marks", "now", "move", "says"),
    [
        (inst(), UNKNOWN, [], EVENING, Move.STOP, "off-hours since Wed 2026-12-02 19:00"),
        (inst(), BUSY, [], EVENING, Move.STOP, "off-hours"),  # the clock decides
        (inst(**{"gpuplan-schedule": "off"}), UNKNOWN, [], EVENING, Move.NONE,
         "gpuplan-schedule=off"),
        (inst(**{"gpuplan-schedule": "nope"}), UNKNOWN, [], EVENING, Move.NONE,
         "names no schedule"),
        (inst(), IdleDecision(IdleVerdict.EXEMPT, "exempt: tag gpuplan-keep is set"), [],
         EVENING, Move.NONE, "exempt"),
        (inst(), IdleDecision(IdleVerdict.MANAGED, "managed by asg"), [], EVENING, Move.NONE,
         "managed"),
        (inst(), IdleDecision(IdleVerdict.OUT_OF_SCOPE, "labels do not match the policy"), [],
         EVENING, Move.NONE, "labels do not match"),
        # A person started it during these off-hours (its start time says so).
        (inst(started=OFF_SINCE + timedelta(minutes=40)), UNKNOWN, [], EVENING, Move.NONE,
         "during these off-hours"),
        # ... or an earlier run of these off-hours saw it stopped (Azure: no start time).
        (inst(), UNKNOWN, [Mark(OFF_SINCE + timedelta(minutes=5), Event.SEEN_STOPPED)],
         EVENING, Move.NONE, "a person started it during these off-hours"),
        # A stop from the previous night does not count for tonight.
        (inst(), UNKNOWN, [Mark(OFF_SINCE - timedelta(days=1), Event.STOPPED)], EVENING,
         Move.STOP, "off-hours"),
        (inst(), UNKNOWN, [], MORNING, Move.NONE, "on-hours"),
        (inst(state=InstanceState.STOPPED), UNKNOWN, [Mark(EVENING, Event.STOPPED)], MORNING,
         Move.START, "stopped it at 2026-12-02 19:30Z"),
        (inst(state=InstanceState.DEALLOCATED), UNKNOWN, [Mark(EVENING, Event.STOPPED)],
         MORNING, Move.START, "ledger"),
        (inst(state=InstanceState.STOPPED), UNKNOWN, [], MORNING, Move.NONE,
         "a person's stop is left alone"),
        # Ours, then seen running, then stopped by someone else: not ours any more.
        (inst(state=InstanceState.STOPPED), UNKNOWN,
         [Mark(EVENING, Event.STOPPED), Mark(EVENING + timedelta(hours=1), Event.SEEN_RUNNING)],
         MORNING, Move.NONE, "started again since"),
        (inst(state=InstanceState.STOPPED, started=EVENING + timedelta(hours=2)), UNKNOWN,
         [Mark(EVENING, Event.STOPPED)], MORNING, Move.NONE, "started again since"),
        (inst(state=InstanceState.STOPPED), UNKNOWN,
         [Mark(EVENING - timedelta(days=1), Event.STOPPED),
          Mark(MORNING - timedelta(days=1), Event.STARTED)],
         MORNING, Move.NONE, "started again since"),
    ],
)  # fmt: skip
def test_which_move(
    instance: GpuInstance,
    verdict: IdleDecision,
    marks: list[Mark],
    now: datetime,
    move: Move,
    says: str,
) -> None:
    got = decide(instance, verdict, SCHEDULES, marks, now)
    assert got.move is move, got.reason
    assert says in got.reason


def test_enforce_off_hours_stops_a_person_started_instance_again() -> None:
    strict = SCHEDULES.model_copy(update={"enforce_off_hours": True})
    started = inst(started=OFF_SINCE + timedelta(minutes=40))
    assert decide(started, UNKNOWN, strict, [], EVENING).move is Move.STOP


def rows(*instances: GpuInstance, verdict: IdleDecision = UNKNOWN) -> list[Row]:
    """Running instances at the evening; stopped ones (stopped by the schedule then) at
    the next morning."""
    out = []
    for i in instances:
        if i.state is InstanceState.STOPPED:
            move = decide(i, verdict, SCHEDULES, [Mark(EVENING, Event.STOPPED)], MORNING)
        else:
            move = decide(i, verdict, SCHEDULES, [], EVENING)
        out.append(Row(i, verdict, ALL, move))
    return out


def test_the_breaker_counts_busy_instances_only() -> None:
    fleet = [inst(f"i-{n}") for n in range(4)]
    rule = ActionRule(allow_data_loss=True, breaker_percent=50, breaker_min_actions=3)
    quiet = plan_schedule(rows(*fleet), lambda _p: rule, EVENING)
    assert quiet.aborted is None and quiet.would_act == 4
    busy = plan_schedule(rows(*fleet, verdict=BUSY), lambda _p: rule, EVENING)
    assert busy.aborted is not None and "while busy" in busy.aborted
    assert busy.aborted.startswith("schedule circuit breaker: 4 of 4")


def test_starts_are_not_capped_and_stops_are() -> None:
    stopped = [inst(f"s-{n}", InstanceState.STOPPED) for n in range(3)]
    plan = plan_schedule(rows(*stopped), lambda _p: ActionRule(max_actions_per_run=1), MORNING)
    assert [p.do for p in plan.items] == [Action.START] * 3
    assert all(p.step is Step.ACT for p in plan.items)
    running = [inst(f"r-{n}") for n in range(3)]
    rule = ActionRule(allow_data_loss=True, max_actions_per_run=1)
    plan = plan_schedule(rows(*running), lambda _p: rule, EVENING)
    assert sorted(p.step.value for p in plan.items) == ["act", "defer", "defer"]


def test_a_notice_uses_the_schedules_own_tag_then_acts() -> None:
    rule = ActionRule(allow_data_loss=True, notice_minutes=30)
    first = plan_schedule(rows(inst()), lambda _p: rule, EVENING).items[0]
    assert first.step is Step.MARK and set(first.tags) == {NOTICE_TAG}
    noticed = inst(**{NOTICE_TAG: first.tags[NOTICE_TAG]})
    later = EVENING + timedelta(minutes=31)
    row = Row(noticed, UNKNOWN, ALL, decide(noticed, UNKNOWN, SCHEDULES, [], later))
    item = plan_schedule([row], lambda _p: rule, later).items[0]
    assert item.step is Step.ACT and item.untag == (NOTICE_TAG,)
    assert item.tags["gpuplan-reason"] == "offhours-office"


def test_the_data_loss_guard_and_the_action() -> None:
    nvme = inst().model_copy(update={"risk": RiskFacts(instance_store_gb=7600)})
    item = plan_schedule(rows(nvme), lambda _p: ActionRule(), EVENING).items[0]
    assert item.step is Step.SKIP and "allow_data_loss" in item.note
    assert schedule_action(Action.TERMINATE) is Action.STOP  # a schedule never deletes
    assert schedule_action(Action.HIBERNATE) is Action.HIBERNATE
    notify = plan_schedule(rows(inst()), lambda _p: ActionRule(action=Action.NOTIFY), EVENING)
    assert notify.items[0].step is Step.NOTIFY
