"""Lifetime rules as a table (pure core): which rule is due, from when, or why not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gpuplan.core.lifecycle.idle import STOPPED_AT_TAG, format_tag_time
from gpuplan.core.lifecycle.instances import Action, GpuInstance
from gpuplan.core.lifecycle.lifetimes import Due, LifetimeRule, Limits, due

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
LIMITS = Limits(max_runtime_minutes=72 * 60, stopped_for_days=30, expires_tag="gpuplan-expires")


def inst(state: str = "running", ran_h: float = 1, attributes: dict[str, str] | None = None,
         **labels: str) -> GpuInstance:  # fmt: skip
    body: dict[str, Any] = {
        "provider": "aws", "account": "1", "region": "us-east-1", "instance_id": "i-1",
        "instance_type": "g5.xlarge", "state": state, "started_at": NOW - timedelta(hours=ran_h),
        "labels": {k.replace("_", "-"): v for k, v in labels.items()},
        "attributes": attributes or {},
    }  # fmt: skip
    return GpuInstance.model_validate(body)


@pytest.mark.parametrize(
    ("instance", "rule", "action"),
    [
        (inst(ran_h=73), LifetimeRule.MAX_RUNTIME, Action.STOP),
        (inst(ran_h=1, gpuplan_expires="2026-12-01"), LifetimeRule.EXPIRES, Action.STOP),
        (inst(ran_h=80, gpuplan_expires="2026-12-01"), LifetimeRule.EXPIRES, Action.STOP),
        (
            inst("stopped", attributes={"stopped_at": "2026-10-01T00:00:00+00:00"}),
            LifetimeRule.STOPPED_FOR,
            Action.TERMINATE,
        ),
        (
            inst(
                "deallocated", **{"gpuplan_stopped_at": format_tag_time(NOW - timedelta(days=31))}
            ),
            LifetimeRule.STOPPED_FOR,
            Action.TERMINATE,
        ),
    ],
)
def test_due(instance: GpuInstance, rule: LifetimeRule, action: Action) -> None:
    found = due(instance, LIMITS, NOW)
    assert isinstance(found, Due)
    assert (found.rule, found.action) == (rule, action)
    assert found.snapshot_first is (action is Action.TERMINATE)


@pytest.mark.parametrize(
    ("instance", "why"),
    [
        (inst(ran_h=71), None),
        (inst(ran_h=1, gpuplan_expires="2026-12-02"), None),  # today has not ended
        (
            inst("stopped", **{"gpuplan_stopped_at": format_tag_time(NOW - timedelta(days=29))}),
            None,
        ),
        (inst("stopped"), "when it stopped is unknown"),
        (inst(ran_h=1, gpuplan_expires="next week"), "is not a date"),
        (inst("pending", ran_h=100), None),
    ],
)
def test_not_due(instance: GpuInstance, why: str | None) -> None:
    found = due(instance, LIMITS, NOW)
    if why is None:
        assert found is None
    else:
        assert isinstance(found, str) and why in found


def test_the_cloud_stop_time_wins_over_the_tag() -> None:
    cloud = {"stopped_at": "2026-11-30T00:00:00+00:00"}  # 2 days ago
    tagged = format_tag_time(NOW - timedelta(days=60))
    assert due(inst("stopped", attributes=cloud, gpuplan_stopped_at=tagged), LIMITS, NOW) is None
    assert STOPPED_AT_TAG == "gpuplan-stopped-at"


def test_no_limits_no_rule() -> None:
    assert due(inst(ran_h=10_000), Limits(expires_tag=None), NOW) is None
