"""The AWS factory for the provider registry (``gpuplan budget``) on moto."""

from __future__ import annotations

import pytest

from gpuplan.core.errors import GpuplanError
from gpuplan.core.offers import Provider
from gpuplan.usecases.fleet import AwsRegions, aws_from_policy
from gpuplan.usecases.providers import ProviderRegistry
from tests.lifecycle.helpers import Faults, policy, providers
from tests.lifecycle.world import World


def test_registry_lists_every_region(world: World) -> None:
    east = world.launch(tags={"team": "research"})
    west = world.launch(region="us-west-2")
    registry = ProviderRegistry()
    registry.register(Provider.AWS, aws_from_policy)
    (adapter,), problems = registry.build(policy(), {})
    assert problems == []
    assert {i.instance_id for i in adapter.list_instances()} == {east, west}


def test_a_failing_region_fails_the_listing(world: World) -> None:
    world.launch()
    world.client("ec2", "us-west-2").meta.events.register_first(
        "before-send.ec2.DescribeInstances", Faults(403, "UnauthorizedOperation", times=100)
    )
    regions = AwsRegions(providers(world, None))
    with pytest.raises(GpuplanError, match=r"us-west-2.*UnauthorizedOperation"):
        regions.list_instances()
