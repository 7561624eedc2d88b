"""The pure core of Kubernetes workloads: shares, stranded GPUs, refusals, grouping."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from gpuplan.core.catalog.offers import PricingModel, Provider
from gpuplan.core.lifecycle.idle import IdleDecision, IdleVerdict
from gpuplan.core.lifecycle.instances import Capability, GpuInstance, InstanceState, RiskFacts
from gpuplan.core.lifecycle.plan import ActionRule, SkipReason, Step, plan_one
from gpuplan.core.lifecycle.workloads import (
    Budget,
    GpuNode,
    GpuPod,
    Owner,
    Workload,
    erases,
    group,
    refusal,
    share,
    stranded,
    workload_hourly,
)

NODE = GpuNode(
    "n",
    "p4d.24xlarge",
    "us-east-1",
    None,
    PricingModel.ON_DEMAND,
    8,
    hourly_usd=Decimal("21.957642"),
)


def pod(
    name: str, gpus: int = 1, ns: str = "ml", owner: Owner | None = None, **kw: object
) -> GpuPod:
    return GpuPod(ns, name, "n", gpus, owner or Owner("Deployment", "web"), **kw)  # type: ignore[arg-type]


def test_a_share_is_gpus_over_node_gpus_times_the_price() -> None:
    assert share(2, NODE) == Decimal("21.957642") * 2 / 8
    assert (
        share(1, GpuNode("s", "x", "r", None, PricingModel.SPOT, 4, "time-slicing", Decimal(4)))
        is None
    )
    assert share(1, GpuNode("u", "x", "r", None, PricingModel.SPOT, 4)) is None


def test_a_workload_costs_the_sum_of_its_pods_or_nothing_when_one_is_unpriced() -> None:
    web = Workload("ml", Owner("Deployment", "web"), (pod("a"), pod("b", 3)))
    assert workload_hourly(web, {"n": NODE}) == Decimal("21.957642") / 2
    assert workload_hourly(web, {}) is None


def test_stranded_gpus_per_node() -> None:
    (spare,) = stranded([NODE], [pod("a", 3), pod("b", 2)])
    assert (spare.gpus, spare.hourly_usd) == (3, Decimal("21.957642") * 3 / 8)
    assert stranded([NODE], [pod("a", 8)]) == []


def test_group_by_namespace_and_owner_sorted() -> None:
    units = group([pod("a"), pod("x", ns="b"), pod("c"), pod("z", owner=Owner("Pod", "z"))])
    assert [(u.key, len(u.pods)) for u in units] == [
        ("b/Deployment/web", 1),
        ("ml/Deployment/web", 2),
        ("ml/Pod/z", 1),
    ]


@pytest.mark.parametrize(
    ("unit", "budgets", "expected"),
    [
        (Workload("ml", Owner("DaemonSet", "d"), (pod("a"),)), [], "DaemonSet pods"),
        (Workload("kube-system", Owner("Pod", "p"), (pod("a"),)), [], "kube-system"),
        (
            Workload("ml", Owner("Job", "j"), (pod("a", labels={"gpuplan.io/opt-out": ""}),)),
            [],
            "opted out",
        ),
        (
            Workload("ml", Owner("Job", "j"), (pod("a", annotations={"gpuplan.io/opt-out": "y"}),)),
            [],
            "opted out",
        ),
        (
            Workload("ml", Owner("Deployment", "w"), (pod("a", labels={"app": "w"}),)),
            [Budget("pdb", "ml", {"app": "w"}, disruptions_allowed=0)],
            "PodDisruptionBudget pdb",
        ),
        (
            Workload("ml", Owner("Deployment", "w"), (pod("a", labels={"app": "w"}),)),
            [Budget("pdb", "ml", {}, (("app", "In", ("w", "v")),), disruptions_allowed=0)],
            "PodDisruptionBudget pdb",
        ),
        (
            Workload("ml", Owner("Deployment", "w"), (pod("a", labels={"app": "w"}),)),
            [Budget("pdb", "ml", {"app": "w"}, disruptions_allowed=1)],
            "",
        ),
        (
            Workload("ml", Owner("Deployment", "w"), (pod("a", labels={"app": "w"}),)),
            [Budget("pdb", "other", {"app": "w"}, disruptions_allowed=0)],
            "",
        ),
        (
            Workload("ml", Owner("Deployment", "w"), (pod("a", labels={"app": "w"}),)),
            [Budget("pdb", "ml", {}, (("app", "NotIn", ("w",)),), disruptions_allowed=0)],
            "",
        ),
    ],
)
def test_refusals(unit: Workload, budgets: list[Budget], expected: str) -> None:
    why = refusal(unit, protected=("kube-system",), opt_out="gpuplan.io/opt-out", budgets=budgets)
    assert (expected in why) if expected else why == ""


def test_only_a_bare_pod_erases() -> None:
    assert erases(Workload("ml", Owner("Deployment", "w"), (pod("a", empty_dir=True),))) == ""
    assert "emptyDir" in erases(Workload("ml", Owner("Pod", "a"), (pod("a", empty_dir=True),)))


def _unit(risk: RiskFacts) -> GpuInstance:
    return GpuInstance(
        provider=Provider.AWS,
        account="c",
        region="r",
        instance_id="ml/Job/j",
        instance_type="g5.xlarge",
        state=InstanceState.RUNNING,
        risk=risk,
    )


def test_the_planner_skips_a_refused_unit_with_its_reason_and_records_the_undo() -> None:
    now = datetime(2026, 12, 4, tzinfo=UTC)
    idle = IdleDecision(IdleVerdict.IDLE, "quiet")
    caps = frozenset({Capability.STOP})
    refused = plan_one(_unit(RiskFacts(refused="DaemonSet pods")), idle, ActionRule(), now, caps)
    assert (refused.step, refused.skip) == (Step.SKIP, SkipReason.REFUSED)
    assert refused.note == "refused: DaemonSet pods"
    undo = plan_one(
        _unit(RiskFacts(undo="gpuplan restore ml/Job/j")), idle, ActionRule(), now, caps
    )
    assert undo.step is Step.ACT and undo.note == "undo: gpuplan restore ml/Job/j"
    lost = plan_one(_unit(RiskFacts(erases="the pod's emptyDir")), idle, ActionRule(), now, caps)
    assert lost.skip is SkipReason.DATA_LOSS and "emptyDir" in lost.note
    noticed = plan_one(
        _unit(RiskFacts(refused="kube-system")), idle, ActionRule(notice_minutes=30), now, caps
    )
    assert noticed.skip is SkipReason.REFUSED and noticed.tags == {}  # no notice tag written


@pytest.mark.parametrize(
    ("keys", "found"),
    [
        (["team", "gpuplan.io/opt-out"], "gpuplan.io/opt-out"),
        (["my.org/no-reclaim"], "my.org/no-reclaim"),
        (["gpuplan/keep"], "gpuplan/keep"),
        (["gpuplan.io/Exempt"], "gpuplan.io/Exempt"),
        (["team", "app.kubernetes.io/name", "keep"], ""),
        (["other.io/opt-out"], ""),
    ],
)
def test_opt_out_keys(keys: list[str], found: str) -> None:
    from gpuplan.core.lifecycle.workloads import opted_out

    assert opted_out(keys, "my.org/no-reclaim") == found
