"""One wire fake per metrics registry entry, behind one small interface.

``BENCHES`` maps every entry name of ``gpuplan.usecases.clouds.metrics_sources.METRICS_ENTRIES``
to a bench: CloudWatch on moto, Cloud Monitoring and Azure Monitor on their wire fakes
(gRPC, TLS), Prometheus on its HTTP API fake. A bench starts instances, publishes each
one's GPU utilisation, GPU memory and CPU the way that source's agent would (flat over
``PERIODS``), and reads them back through the entry's source: a cloud's own monitoring
through that cloud's adapter, a shared source through the entry's factory. An entry
without a bench fails ``test_every_entry_has_a_wire_fake``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

import pytest

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.instances import GpuInstance, HostSamples, InstanceState
from gpuplan.core.policy.metrics_settings import PrometheusMetrics
from gpuplan.providers.azure.metrics import PLATFORM_NAMESPACE
from gpuplan.providers.gcp.monitoring import DEFAULT_CPU, DEFAULT_MEMORY
from gpuplan.usecases.clouds.metrics_sources import metrics_entry
from tests.fakes.aws_world import World
from tests.fakes.azure_world import SUB, AzureWorld, azure  # noqa: F401
from tests.fakes.fixtures import ca_file, catalog, test_ca  # noqa: F401
from tests.fakes.gcp_world import PROJECT, GcpWorld, gcp  # noqa: F401
from tests.fakes.http import serve
from tests.fakes.moto_fixtures import aws_env, world  # noqa: F401
from tests.fakes.prometheus import PrometheusFake
from tests.fakes.scenarios import NOW, PERIODS, WINDOW

TOTAL_MIB = 81559.0


@dataclass(frozen=True)
class Signals:
    """What one instance's agent publishes in every period."""

    name: str
    utilisation: float
    memory_percent: float
    cpu_percent: float


class Bench(Protocol):
    def start(self, signals: Signals) -> str:
        """Start one running GPU instance publishing ``signals``; returns its id."""
        ...

    def read(self) -> tuple[list[GpuInstance], dict[str, HostSamples]]:
        """The running instances, and what the entry's source read for them."""
        ...


def _read(adapter: Any) -> tuple[list[GpuInstance], dict[str, HostSamples]]:
    running = [i for i in adapter.list_instances() if i.state is InstanceState.RUNNING]
    got = adapter.fetch_utilisation(running, start=WINDOW[0], end=WINDOW[1], period_minutes=5)
    return running, got


@dataclass
class CloudWatchBench:
    world: World

    def start(self, signals: Signals) -> str:
        iid = self.world.launch("g5.xlarge")
        dims = {"InstanceId": iid, "index": "0", "name": "NVIDIA A10G", "host": "h"}
        gpu = [{"Name": k, "Value": v} for k, v in dims.items()]
        ec2 = [{"Name": "InstanceId", "Value": iid}]
        used = TOTAL_MIB * signals.memory_percent / 100
        rows: dict[str, list[dict[str, Any]]] = {"CWAgent": [], "AWS/EC2": []}
        for begin in PERIODS:
            at = begin + timedelta(seconds=30)
            for metric, value in (("nvidia_smi_utilization_gpu", signals.utilisation),
                                  ("nvidia_smi_memory_used", used),
                                  ("nvidia_smi_memory_total", TOTAL_MIB)):  # fmt: skip
                rows["CWAgent"].append(_row(metric, gpu, at, value))
            rows["AWS/EC2"].append(_row("CPUUtilization", ec2, begin, signals.cpu_percent))
        cw = self.world.client("cloudwatch", "us-east-1")
        for namespace, data in rows.items():
            cw.put_metric_data(Namespace=namespace, MetricData=data)
        return iid

    def read(self) -> tuple[list[GpuInstance], dict[str, HostSamples]]:
        from gpuplan.providers.aws.provider import AwsAdapter

        return _read(
            AwsAdapter(
                "us-east-1",
                ec2_client=self.world.client("ec2", "us-east-1"),
                cloudwatch_client=self.world.client("cloudwatch", "us-east-1"),
            )
        )


def _row(name: str, dims: list[dict[str, str]], at: Any, value: float) -> dict[str, Any]:
    return {"MetricName": name, "Dimensions": dims, "Timestamp": at, "Value": value}


@dataclass
class CloudMonitoringBench:
    world: GcpWorld

    def start(self, signals: Signals) -> str:
        iid = self.world.compute.add(
            PROJECT, "us-central1-a", signals.name, "a2-highgpu-1g",
            lastStartTimestamp=(NOW - timedelta(days=1)).isoformat(),
        )  # fmt: skip
        total = 80e9
        used = total * signals.memory_percent / 100
        for begin in PERIODS:
            at = begin + timedelta(seconds=40)
            self.world.publish(iid, 0, at, signals.utilisation)
            memory: dict[str, Any] = {"metric_type": DEFAULT_MEMORY}
            self.world.publish(iid, 0, at, used, memory_state="used", **memory)
            self.world.publish(iid, 0, at, total - used, memory_state="free", **memory)
            self.world.publish(iid, 0, at, signals.cpu_percent / 100, metric_type=DEFAULT_CPU)
        return iid

    def read(self) -> tuple[list[GpuInstance], dict[str, HostSamples]]:
        return _read(self.world.provider())


@dataclass
class AzureMonitorBench:
    world: AzureWorld

    def start(self, signals: Signals) -> str:
        rid = self.world.fake.add_vm(
            SUB, "rg", signals.name, "Standard_NC24ads_A100_v4",
            timeCreated=(NOW - timedelta(days=1)).isoformat(),
        )  # fmt: skip
        fake = self.world.fake
        for begin in PERIODS:
            at = begin + timedelta(seconds=30)
            fake.publish(rid, 0, at, signals.utilisation)
            fake.publish(rid, 0, at, TOTAL_MIB * signals.memory_percent / 100, metric="memory_used")
            fake.publish(rid, 0, at, TOTAL_MIB, metric="memory_total")
            fake.publish(
                rid, 0, at, signals.cpu_percent,
                namespace=PLATFORM_NAMESPACE, metric="Percentage CPU",
            )  # fmt: skip
        return rid

    def read(self) -> tuple[list[GpuInstance], dict[str, HostSamples]]:
        return _read(self.world.provider())


@dataclass
class PrometheusBench:
    fake: PrometheusFake
    url: str
    instances: list[GpuInstance]

    def start(self, signals: Signals) -> str:
        iid = f"i-{len(self.instances):017x}"
        base = {"instance_id": iid, "gpu": "0", "Hostname": "h", "instance": "h:9400"}
        used = TOTAL_MIB * signals.memory_percent / 100
        for begin in PERIODS:
            at = begin + timedelta(seconds=30)
            for metric, value in (("DCGM_FI_DEV_GPU_UTIL", signals.utilisation),
                                  ("DCGM_FI_DEV_FB_USED", used),
                                  ("DCGM_FI_DEV_FB_FREE", TOTAL_MIB - used)):  # fmt: skip
                self.fake.publish({**base, "__name__": metric}, at, value)
        idle_seconds = 0.0
        for minute in range(-5, 5 * len(PERIODS) + 1):  # node_exporter's idle counter
            idle_seconds += 60 * (1 - signals.cpu_percent / 100)
            at = PERIODS[0] + timedelta(minutes=minute, seconds=15)
            labels = {"__name__": "node_cpu_seconds_total", "instance_id": iid,
                      "cpu": "0", "mode": "idle"}  # fmt: skip
            self.fake.publish(labels, at, idle_seconds)
        instance = GpuInstance(
            provider=Provider.AWS, account="acct", region="us-east-1", instance_id=iid,
            name=signals.name, instance_type="g5.xlarge", state=InstanceState.RUNNING,
            started_at=NOW - timedelta(days=1), gpu_count=1,
        )  # fmt: skip
        self.instances.append(instance)
        return iid

    def read(self) -> tuple[list[GpuInstance], dict[str, HostSamples]]:
        entry = metrics_entry("prometheus")
        assert entry.factory is not None
        source = entry.factory(PrometheusMetrics.model_validate({"url": self.url}))
        got = source.fetch_utilisation(
            self.instances, start=WINDOW[0], end=WINDOW[1], period_minutes=5
        )
        return list(self.instances), got


def _cloudwatch(request: pytest.FixtureRequest) -> Iterator[Bench]:
    yield CloudWatchBench(request.getfixturevalue("world"))


def _cloud_monitoring(request: pytest.FixtureRequest) -> Iterator[Bench]:
    yield CloudMonitoringBench(request.getfixturevalue("gcp"))


def _azure_monitor(request: pytest.FixtureRequest) -> Iterator[Bench]:
    yield AzureMonitorBench(request.getfixturevalue("azure"))


def _prometheus(request: pytest.FixtureRequest) -> Iterator[Bench]:
    fake = PrometheusFake()
    with serve(fake) as url:
        yield PrometheusBench(fake, url, [])


BENCHES: dict[str, Callable[[pytest.FixtureRequest], Iterator[Bench]]] = {
    "aws": _cloudwatch,
    "gcp": _cloud_monitoring,
    "azure": _azure_monitor,
    "prometheus": _prometheus,
}
"""Metrics entry name -> its wire fake."""


@pytest.fixture
def bench(request: pytest.FixtureRequest) -> Iterator[Bench]:
    """The bench of the entry named by the test's ``entry_name`` parameter."""
    name = request.getfixturevalue("entry_name")
    if name not in BENCHES:
        pytest.fail(f"metrics entry {name!r} has no wire fake in {__name__}.BENCHES")
    yield from BENCHES[name](request)


__all__: Sequence[str] = ["BENCHES", "Bench", "Signals"]
