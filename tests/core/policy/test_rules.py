"""Pure policy rules: scope membership, planning and budget exclusions, idle actions."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from gpuplan.core.catalog.offers import PricingModel, Provider
from gpuplan.core.lifecycle.instances import Action, GpuInstance
from gpuplan.core.policy import (
    IdleAction,
    Policy,
    budget_exclusion,
    out_of_scope_reason,
    planning_exclusion,
)

SUB = "3f2b6a1e-8c4d-4e0f-9a7b-1c2d3e4f5a6b"
POLICY = Policy.model_validate(
    {
        "version": 1,
        "name": "t",
        "scope": {
            "aws": {"regions": ["us-east-1"]},
            "gcp": {"projects": ["proj"], "zones": ["us-central1-a"]},
            "azure": {"subscriptions": [SUB]},
            "match_labels": {"team": "research"},
        },
        "budget": {"monthly_usd": 1000, "max_hourly_usd": 60},
        "planning": {
            "allowed_gpus": ["H100"],
            "allowed_pricing": ["spot"],
            "allowed_regions": ["us-east-1"],
        },
    }
)


def vm(**extra: Any) -> GpuInstance:
    fields: dict[str, Any] = {
        "provider": "aws", "account": "1", "region": "us-east-1", "instance_id": "i",
        "instance_type": "p5.48xlarge", "state": "running", "labels": {"team": "research"},
    }  # fmt: skip
    fields.update(extra)
    return GpuInstance.model_validate(fields)


@pytest.mark.parametrize(
    ("instance", "reason"),
    [
        (vm(), None),
        (vm(region="eu-west-1"), "region eu-west-1 is not in scope.aws.regions"),
        (vm(labels={}), "labels do not match the policy (team=research)"),
        (vm(labels={"team": "other"}), "labels do not match the policy (team=research)"),
        (vm(provider="gcp", account="proj", zone="us-central1-a"), None),
        (vm(provider="gcp", account="other", zone="us-central1-a"), "project other"),
        (vm(provider="gcp", account="proj", zone="us-central1-b"), "zone us-central1-b"),
        (vm(provider="azure", account=SUB.upper()), None),
        (vm(provider="azure", account="x"), "subscription x"),
    ],
)
def test_out_of_scope_reason(instance: GpuInstance, reason: str | None) -> None:
    found = out_of_scope_reason(instance, POLICY)
    assert (found is None) if reason is None else (found is not None and reason in found)


def test_provider_without_section_is_out_of_scope() -> None:
    only_aws = Policy.model_validate(
        {"version": 1, "name": "t", "scope": {"aws": {"regions": ["us-east-1"]}}}
    )
    assert out_of_scope_reason(vm(provider="gcp"), only_aws) == "gcp is not in the policy's scope"
    assert out_of_scope_reason(vm(labels={}), only_aws) is None  # empty match_labels: all


@pytest.mark.parametrize(
    ("gpu", "pricing", "region", "reason"),
    [
        ("H100", PricingModel.SPOT, "us-east-1", None),
        ("L4", PricingModel.SPOT, "us-east-1", "GPU L4 is not in planning.allowed_gpus (H100)"),
        ("H100", PricingModel.ON_DEMAND, "us-east-1", "pricing on_demand is not in"),
        ("H100", PricingModel.SPOT, "eastus", "region eastus is not in planning.allowed_regions"),
    ],
)
def test_planning_exclusion(
    gpu: str, pricing: PricingModel, region: str, reason: str | None
) -> None:
    found = planning_exclusion(POLICY, gpu=gpu, pricing=pricing, region=region)
    assert (found is None) if reason is None else (found is not None and reason in found)
    open_policy = Policy.model_validate({"version": 1, "name": "t"})
    assert planning_exclusion(open_policy, gpu=gpu, pricing=pricing, region=region) is None


def test_budget_exclusion() -> None:
    assert budget_exclusion(POLICY, hourly_usd=Decimal("55.04")) is None
    assert "above budget.max_hourly_usd ($60/h)" in (
        budget_exclusion(POLICY, hourly_usd=Decimal("98.32")) or ""
    )
    over = budget_exclusion(
        POLICY, hourly_usd=Decimal(1), total_usd=Decimal("900"), remaining_usd=Decimal("800")
    )
    assert over == "$900.00 is above the remaining monthly budget ($800.00)"
    assert budget_exclusion(POLICY, hourly_usd=None, total_usd=Decimal(1)) is None


def test_idle_action_maps_to_provider_action() -> None:
    assert IdleAction.STOP.for_provider(Provider.AZURE) is Action.DEALLOCATE
    assert IdleAction.STOP.for_provider(Provider.AWS) is Action.STOP
    assert IdleAction.SUSPEND.for_provider(Provider.GCP) is Action.SUSPEND
    assert IdleAction.NOTIFY.for_provider(Provider.AWS) is Action.NOTIFY


def test_suspend_is_fine_with_gcp_only() -> None:
    from gpuplan.core.policy import Scope, check_rules

    gcp = Policy.model_validate(
        {
            "version": 1,
            "name": "t",
            "scope": {"gcp": {"projects": ["p"]}},
            "idle": {"action": "suspend"},
        }
    )
    assert check_rules(gcp) == []
    nothing = gcp.model_copy(update={"scope": Scope()})
    [problem] = check_rules(nothing)
    assert problem.path == ("idle", "action") and "scope names no gcp" in problem.message
