"""One backend per registry entry, behind one small interface, for the contract suite.

The backends are parametrised over the registry's entries (:data:`BACKENDS`), each
through its wire fake in :data:`WIRE_FAKES`: an entry without one fails the suite.

AWS runs on moto, GCP and Azure on the wire fakes (Compute REST and Monitoring gRPC,
ARM over TLS), the fake in memory. Each backend builds a scenario case its own way
(an instance with its agent's samples), optionally with local storage that actions
erase, and lists adapters the way the registry entry's builder would for its scope.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Protocol

import boto3
import pytest

from gpuplan.core.catalog.offers import PricingModel, Provider
from gpuplan.core.lifecycle.instances import GpuInstance, InstanceState, RiskFacts
from gpuplan.providers.aws.provider import AwsAdapter
from gpuplan.providers.base import CloudAdapter
from gpuplan.providers.fake import FakeAdapter
from gpuplan.usecases.clouds import registry as cloud_registry
from gpuplan.usecases.clouds.adapters import CloudEntry
from gpuplan.usecases.clouds.entries import FAKE_ENTRY
from tests.e2e.contract.kube_backend import kube
from tests.fakes.aws_world import World
from tests.fakes.azure_world import SUB, AzureWorld, azure  # noqa: F401
from tests.fakes.fixtures import ca_file, catalog, test_ca  # noqa: F401
from tests.fakes.gcp_world import PROJECT, GcpWorld, gcp  # noqa: F401
from tests.fakes.moto_fixtures import aws_env  # noqa: F401
from tests.fakes.scenarios import NOW, PERIODS, Case, samples_of


class Backend(Protocol):
    entry: CloudEntry
    scope: dict[str, Any]

    def build(self, case: Case, *, local_storage: bool = False) -> str: ...

    def adapters(self) -> list[CloudAdapter]: ...


BY_PROVIDER = cloud_registry.entries_by_provider()


@dataclass
class AwsBackend:
    world: World
    catalog: Any
    entry: CloudEntry = BY_PROVIDER[Provider.AWS]
    scope = {"aws": {"regions": ["us-east-1"]}}  # noqa: RUF012

    def build(self, case: Case, *, local_storage: bool = False) -> str:
        # Every current GPU type carries NVMe instance store; g5g (T4G) has none.
        kind = "g5.xlarge" if local_storage else "g5g.xlarge"
        tags = {**case.labels, "Name": case.name}
        iid = self.world.launch(kind, tags=tags, launched=case.started)
        if case.pattern is not None:
            self.world.publish(iid, case.pattern, gpus=case.gpus, periods=list(PERIODS))
        return iid

    def adapters(self) -> list[CloudAdapter]:
        return [
            AwsAdapter(
                "us-east-1",
                ec2_client=self.world.client("ec2", "us-east-1"),
                cloudwatch_client=self.world.client("cloudwatch", "us-east-1"),
                catalog=self.catalog,
            )
        ]


@dataclass
class GcpBackend:
    world: GcpWorld
    entry: CloudEntry = BY_PROVIDER[Provider.GCP]
    scope = {"gcp": {"projects": [PROJECT]}}  # noqa: RUF012

    def build(self, case: Case, *, local_storage: bool = False) -> str:
        iid = self.world.build(case)
        if local_storage:
            body = self.world.compute.instances[(PROJECT, case.name)]
            body["disks"] = [*body.get("disks", []), {"type": "SCRATCH"}]
        return iid

    def adapters(self) -> list[CloudAdapter]:
        return [self.world.provider()]


@dataclass
class AzureBackend:
    world: AzureWorld
    entry: CloudEntry = BY_PROVIDER[Provider.AZURE]
    scope = {"azure": {"subscriptions": [SUB]}}  # noqa: RUF012

    def build(self, case: Case, *, local_storage: bool = False) -> str:
        rid = self.world.build(case)
        if local_storage:
            size = self.world.fake.vms[rid.lower()]["properties"]["hardwareProfile"]["vmSize"]
            self.world.fake.temp_disk_mb[size.lower()] = 720 * 1024
        return rid

    def adapters(self) -> list[CloudAdapter]:
        return [self.world.provider()]


@dataclass
class FakeBackend:
    fake: FakeAdapter
    entry: CloudEntry = FAKE_ENTRY
    scope = {"aws": {"regions": ["us-east-1"]}}  # noqa: RUF012

    def build(self, case: Case, *, local_storage: bool = False) -> str:
        iid = f"i-{case.name}"
        self.fake.instances[iid] = GpuInstance(
            provider=Provider.AWS,
            account="123456789012",
            region="us-east-1",
            instance_id=iid,
            name=case.name,
            instance_type="g5.xlarge",
            state=InstanceState.RUNNING if case.running else InstanceState.STOPPED,
            started_at=case.started,
            labels=dict(case.labels),
            pricing=PricingModel.ON_DEMAND,
            gpu="A10G",
            gpu_count=case.gpus,
            risk=RiskFacts(instance_store_gb=250 if local_storage else 0),
        )
        samples: dict[str, dict[Any, float]] = {}
        for gpu, at, value in samples_of(case):
            samples.setdefault(str(gpu), {})[at - timedelta(seconds=90)] = value
        if samples:
            self.fake.utilisation[iid] = samples
        return iid

    def adapters(self) -> list[CloudAdapter]:
        return [self.fake]


def _aws(request: pytest.FixtureRequest) -> Iterator[Backend]:
    request.getfixturevalue("aws_env")
    from moto import mock_aws

    with mock_aws():
        world = World(boto3.Session(region_name="us-east-1"))
        yield AwsBackend(world, request.getfixturevalue("catalog"))


def _gcp(request: pytest.FixtureRequest) -> Iterator[Backend]:
    yield GcpBackend(request.getfixturevalue("gcp"))


def _azure(request: pytest.FixtureRequest) -> Iterator[Backend]:
    yield AzureBackend(request.getfixturevalue("azure"))


WIRE_FAKES: dict[Provider, Callable[[pytest.FixtureRequest], Iterator[Backend]]] = {
    Provider.AWS: _aws,
    Provider.GCP: _gcp,
    Provider.AZURE: _azure,
    cloud_registry.entries_by_provider()[Provider("kubernetes")].provider: kube,
}
"""Each registry entry's wire fake: the suite fails for an entry that has none."""

FAKE = "fake"
MANAGED = [e for e in cloud_registry.entries() if not e.catalog_only]
"""The entries with a lifecycle adapter (a catalog-only cloud lists and acts on nothing:
its entry refuses every feature, which ``test_every_entry`` checks instead)."""
BACKENDS = [*(e.provider.value for e in MANAGED), FAKE]
"""The contract suite's backends: every entry that manages instances, then the fake."""


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    if request.param == FAKE:
        from gpuplan.core.lifecycle.instances import Capability

        yield FakeBackend(FakeAdapter(Provider.AWS, capabilities=tuple(Capability)))
        return
    provider = Provider(request.param)
    if provider not in WIRE_FAKES:
        pytest.fail(f"registry entry {provider.value} has no wire fake in WIRE_FAKES")
    yield from WIRE_FAKES[provider](request)


__all__ = ["NOW", "Backend", "replace"]
