"""Pure lifecycle planning: decisions in, steps with reasons out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pytest

from gpuplan.core.catalog.offers import PricingModel, Provider
from gpuplan.core.lifecycle.idle import IdleDecision, IdleVerdict
from gpuplan.core.lifecycle.instances import (
    ACTING,
    NEEDS,
    RESTORING,
    Action,
    Capability,
    GpuInstance,
    InstanceState,
    RiskFacts,
)
from gpuplan.core.lifecycle.plan import DONE, ActionRule, Step, plan, plan_one

NOW = datetime(2026, 12, 2, 10, 15, tzinfo=UTC)
ALL = frozenset(Capability)
IDLE = IdleDecision(IdleVerdict.IDLE, "idle")
BUSY = IdleDecision(IdleVerdict.BUSY, "busy")


def inst(
    kind: str = "g5.xlarge",
    labels: dict[str, str] | None = None,
    gpu: str = "A10G",
    **risk: Any,
) -> GpuInstance:
    return GpuInstance(
        provider=Provider.AWS,
        account="1",
        region="us-east-1",
        instance_id="i-1",
        instance_type=kind,
        state=InstanceState.RUNNING,
        labels=labels or {},
        gpu=gpu,
        gpu_count=1,
        pricing=PricingModel.SPOT if "spot_one_time" in risk else PricingModel.ON_DEMAND,
        risk=RiskFacts(**risk),
    )


LOSS = ActionRule(allow_data_loss=True)
TERMINATE = ActionRule(action=Action.TERMINATE)


@pytest.mark.parametrize(
    ("instance", "rule", "step", "do", "note"),
    [
        (inst(), ActionRule(), Step.ACT, Action.STOP, ""),
        (inst(hibernation_enabled=True), ActionRule(action=Action.HIBERNATE), Step.ACT,
         Action.HIBERNATE, ""),
        (inst(), ActionRule(action=Action.HIBERNATE), Step.ACT, Action.STOP,
         "not launched with hibernation"),
        (inst(spot_one_time=True), ActionRule(), Step.SKIP, Action.NONE, "one-time spot"),
        (inst(spot_one_time=True), TERMINATE, Step.ACT, Action.TERMINATE, ""),
        (inst(spot_one_time=False), ActionRule(), Step.ACT, Action.STOP, ""),
        (inst(root_instance_store=True), ActionRule(), Step.SKIP, Action.NONE,
         "cannot be stopped"),
        (inst(root_instance_store=True), TERMINATE, Step.SKIP, Action.NONE, "allow_data_loss"),
        (inst(root_instance_store=True),
         ActionRule(action=Action.TERMINATE, allow_data_loss=True), Step.ACT,
         Action.TERMINATE, ""),
        # Instance store on any device, not only the root (p4d: 8 x 1000 GB NVMe, EBS root).
        (inst("p4d.24xlarge", instance_store_gb=8000), ActionRule(), Step.SKIP, Action.NONE,
         "stop erases 8000 GB of instance-store"),
        (inst("g5.xlarge", instance_store_gb=250), TERMINATE, Step.SKIP, Action.NONE,
         "terminate erases 250 GB"),
        (inst("g5.xlarge", instance_store_gb=250), ActionRule(action=Action.HIBERNATE),
         Step.SKIP, Action.NONE, "allow_data_loss"),
        (inst("p4d.24xlarge", instance_store_gb=8000), LOSS, Step.ACT, Action.STOP, ""),
        (inst(local_ssd_count=2), ActionRule(), Step.SKIP, Action.NONE, "2 local SSD"),
        (inst(local_ssd_count=1), ActionRule(action=Action.SUSPEND), Step.SKIP, Action.NONE,
         "local SSD"),
        (inst(local_ssd_count=1), LOSS, Step.ACT, Action.STOP, ""),
        (inst(temp_disk_gb=1100), ActionRule(action=Action.DEALLOCATE), Step.SKIP,
         Action.NONE, "1100 GB temporary disk"),
        (inst(temp_disk_gb=None), ActionRule(action=Action.DEALLOCATE), Step.SKIP,
         Action.NONE, "could not be read"),
        (inst(temp_disk_gb=0), ActionRule(action=Action.DEALLOCATE), Step.ACT,
         Action.DEALLOCATE, ""),
        (inst(), ActionRule(action=Action.NOTIFY), Step.NOTIFY, Action.NONE, "notify"),
        (inst(), ActionRule(action=Action.SUSPEND), Step.ACT, Action.SUSPEND, ""),
    ],
)  # fmt: skip
def test_actions(
    instance: GpuInstance, rule: ActionRule, step: Step, do: Action, note: str
) -> None:
    p = plan_one(instance, IDLE, rule, NOW, ALL)
    assert (p.step, p.do) == (step, do)
    assert note in p.note


def test_missing_capability_skips() -> None:
    p = plan_one(inst(), IDLE, ActionRule(), NOW, frozenset({Capability.LIST}))
    assert p.step is Step.SKIP and "cannot stop" in p.note


def test_act_tags_when_and_why_and_warns_on_scarce_types() -> None:
    p = plan_one(inst("p5.48xlarge", gpu="H100", instance_store_gb=30400), IDLE,
                 LOSS, NOW, ALL)  # fmt: skip
    assert p.tags == {"gpuplan-stopped-at": "20261202t101500z", "gpuplan-reason": "idle-60m-lt5pct"}
    assert any("scarce" in w for w in p.warnings)
    assert any("30400 GB of instance-store" in w for w in p.warnings)
    assert plan_one(inst(), IDLE, ActionRule(), NOW, ALL).warnings == ()


def test_notice_marks_waits_then_acts() -> None:
    rule = ActionRule(notice_minutes=30)
    first = plan_one(inst(), IDLE, rule, NOW, ALL)
    assert first.step is Step.MARK
    assert first.tags == {"gpuplan-stop-after": "20261202t104500z"}
    marked = inst(labels=dict(first.tags))
    assert plan_one(marked, IDLE, rule, NOW + timedelta(minutes=10), ALL).step is Step.WAIT
    due = plan_one(marked, IDLE, rule, NOW + timedelta(minutes=30), ALL)
    assert due.step is Step.ACT and due.untag == ("gpuplan-stop-after",)
    back = plan_one(marked, BUSY, rule, NOW + timedelta(minutes=10), ALL)
    assert back.step is Step.CLEAR and back.untag == ("gpuplan-stop-after",)


def test_not_idle_means_no_action() -> None:
    for verdict in IdleVerdict:
        if verdict is IdleVerdict.IDLE:
            continue
        p = plan_one(inst(), IdleDecision(verdict, "x"), ActionRule(), NOW, ALL)
        assert (p.step, p.planned_action) == (Step.NONE, Action.NONE)


def priced(
    instance_id: str, hourly: str, state: InstanceState = InstanceState.RUNNING
) -> GpuInstance:
    return inst().model_copy(
        update={"instance_id": instance_id, "hourly_usd": Decimal(hourly), "state": state}
    )


def test_the_cap_acts_on_the_most_dollars_and_defers_the_rest() -> None:
    # Issue 25: on main, more idle instances than the cap aborted the run (nothing done).
    fleet = [priced("cheap", "1.01"), priced("p5", "98.32"), priced("p4d", "32.77")]
    fleet += [priced(f"busy-{n}", "5") for n in range(7)]
    decisions = [(i, IDLE if i.instance_id[:4] != "busy" else BUSY, ALL) for i in fleet]
    result = plan(decisions, ActionRule(max_actions_per_run=2), NOW)
    assert result.aborted is None
    steps = {p.instance.instance_id: p for p in result.items}
    assert steps["p5"].step is Step.ACT and steps["p4d"].step is Step.ACT
    late = steps["cheap"]
    assert late.step is Step.DEFER and late.do is Action.NONE and not late.tags
    assert late.note.startswith("deferred: cap 2 reached")
    assert (result.would_act, result.deferred) == (2, 1)


def test_idle_minutes_break_a_price_tie() -> None:
    long = IdleDecision(IdleVerdict.IDLE, "idle", idle_minutes=170)
    short = IdleDecision(IdleVerdict.IDLE, "idle", idle_minutes=60)
    fleet = [(priced("a", "3"), short, ALL), (priced("b", "3"), long, ALL)]
    fleet += [(priced(f"busy-{n}", "3"), BUSY, ALL) for n in range(8)]
    result = plan(fleet, ActionRule(max_actions_per_run=1), NOW)
    assert [p.instance.instance_id for p in result.items if p.step is Step.ACT] == ["b"]


def test_the_breaker_trips_on_most_of_the_running_fleet_at_once() -> None:
    # Every running instance due at once (metrics reading 0%): nothing is done.
    broken = [(priced(f"i-{n}", "5"), IDLE, ALL) for n in range(10)]
    stopped = [(priced(f"s-{n}", "5", InstanceState.STOPPED), BUSY, ALL) for n in range(5)]
    result = plan(broken + stopped, ActionRule(), NOW)
    assert result.aborted is not None
    assert result.aborted.startswith("circuit breaker: 10 of 10 running GPU instances (100%)")


def test_the_breaker_leaves_a_friday_evening_alone() -> None:
    # 40% of 80 notebooks go home together: normal, capped and deferred, not an anomaly.
    fleet = [(priced(f"nb-{n}", "1"), IDLE if n < 32 else BUSY, ALL) for n in range(80)]
    result = plan(fleet, ActionRule(), NOW)
    assert result.aborted is None and (result.would_act, result.deferred) == (10, 22)


def test_the_breaker_ignores_a_few_actions_on_a_small_fleet() -> None:
    # Two running instances, both idle in the same run: below breaker_min_actions (3).
    fleet = [(priced(f"i-{n}", "1"), IDLE, ALL) for n in range(2)]
    assert plan(fleet, ActionRule(), NOW).would_act == 2
    three = [(priced(f"i-{n}", "1"), IDLE, ALL) for n in range(3)]
    assert plan(three, ActionRule(), NOW).aborted is not None
    assert plan(three, ActionRule(breaker_min_actions=4), NOW).would_act == 3


def test_every_acting_action_has_a_capability_and_an_outcome() -> None:
    assert set(NEEDS) == {*ACTING, *RESTORING} == set(DONE)
    assert set(ACTING) == set(Action) - {Action.NOTIFY, Action.NONE, *RESTORING}


def test_the_cap_counts_across_clouds_with_per_cloud_rules() -> None:
    azure = inst().model_copy(update={"provider": Provider.AZURE, "instance_id": "vm-1"})
    rules = {
        Provider.AWS: ActionRule(max_actions_per_run=1),
        Provider.AZURE: ActionRule(action=Action.DEALLOCATE, max_actions_per_run=1),
    }
    result = plan([(inst(), IDLE, ALL), (azure, IDLE, ALL)], rules.__getitem__, NOW)
    assert [i.do for i in result.items] == [Action.STOP, Action.NONE]
    assert [i.step for i in result.items] == [Step.ACT, Step.DEFER]
