"""Pure lifecycle planning: decisions in, steps with reasons out."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gpuplan.core.fleet import (
    ACTING,
    NEEDS,
    Action,
    Capability,
    GpuInstance,
    InstanceState,
    RiskFacts,
)
from gpuplan.core.idle import IdleDecision, IdleVerdict
from gpuplan.core.lifecycle import DONE, ActionRule, Step, plan, plan_one
from gpuplan.core.offers import PricingModel, Provider

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


def test_cap_aborts() -> None:
    many = [(inst(), IDLE, ALL) for _ in range(3)]
    assert plan(many, ActionRule(max_actions_per_run=3), NOW).aborted is None
    aborted = plan(many, ActionRule(max_actions_per_run=2), NOW).aborted
    assert aborted is not None and "max_actions_per_run = 2" in aborted


def test_every_acting_action_has_a_capability_and_an_outcome() -> None:
    assert set(NEEDS) == set(ACTING) == set(DONE)
    assert set(ACTING) == set(Action) - {Action.NOTIFY, Action.NONE}


def test_the_cap_counts_across_clouds_with_per_cloud_rules() -> None:
    azure = inst().model_copy(update={"provider": Provider.AZURE})
    rules = {
        Provider.AWS: ActionRule(max_actions_per_run=1),
        Provider.AZURE: ActionRule(action=Action.DEALLOCATE, max_actions_per_run=1),
    }
    result = plan([(inst(), IDLE, ALL), (azure, IDLE, ALL)], rules.__getitem__, NOW)
    assert [i.do for i in result.items] == [Action.STOP, Action.DEALLOCATE]
    assert result.aborted is not None and "2 instances" in result.aborted
