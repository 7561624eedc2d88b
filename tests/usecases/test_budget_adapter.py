"""The AWS registry entry as ``gpuplan budget`` uses it, on moto."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from gpuplan.core.catalog.offers import Provider
from gpuplan.ledger import Ledger
from gpuplan.providers.aws.entry import aws_scopes
from gpuplan.providers.base import CloudAdapter
from gpuplan.usecases.audit.budget import list_in_scope, run_budget
from gpuplan.usecases.clouds.adapters import BuildContext, build_adapters, default_registry
from tests.fakes.aws_helpers import Faults, policy
from tests.fakes.aws_world import World


def test_one_adapter_per_region(world: World) -> None:
    east = world.launch(tags={"team": "research"})
    west = world.launch(region="us-west-2")
    fleet = build_adapters(policy(), None, {})
    assert fleet.problems == []
    assert [a.scope for a in fleet.adapters] == ["aws us-east-1", "aws us-west-2"]
    listed = {i.instance_id for a in fleet.adapters for i in a.list_instances()}
    assert listed == {east, west}


def faulty_west(context: BuildContext) -> dict[str, CloudAdapter]:
    """The real AWS builder, with us-west-2 refusing DescribeInstances at the wire."""
    scopes = aws_scopes(context)
    client: Any = scopes["us-west-2"]._ec2  # type: ignore[attr-defined]
    client.meta.events.register_first(
        "before-send.ec2.DescribeInstances", Faults(403, "UnauthorizedOperation", times=100)
    )
    return scopes


def test_a_failing_region_is_named_and_fails_the_budget(world: World) -> None:
    world.launch()
    registry = default_registry()
    registry.register(replace(registry.entries[Provider.AWS], scopes=faulty_west))
    _, problems, _ = list_in_scope(policy(), registry, {})
    assert len(problems) == 1
    assert "aws us-west-2" in problems[0] and "UnauthorizedOperation" in problems[0]
    outcome = run_budget(
        policy(),
        ledger=Ledger(":memory:"),
        registry=registry,
        environ={},
        now=datetime(2026, 12, 2, tzinfo=UTC),
        notifier=None,
    )
    assert outcome.failed and not outcome.recorded
