"""The live audit end to end through the GCP, Azure and Prometheus wire fakes: a week of
hourly metrics for 10 and 100 instances read by the real SDK code paths
(google-cloud-compute and -monitoring, azure-mgmt-compute and the batch metrics API,
httpx to the Prometheus HTTP API), audited by ``audit_fleet``, the code `gpuplan audit
--policy` runs.

Every fleet cycles through five workloads whose dollar split is known here, from what
was published: a well-used trainer (80% GPU), a forgotten machine (idle), an
input-bound job (30% GPU, CPU at 95%), the trainer with its agent installed half way
through the week (the first half unknown) and an agent-less instance (skipped, never
idle). The split must match to the cent, and the API calls must follow the sources'
pages and series, never the number of instances.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
import trustme
from azure.core.credentials import AccessToken
from google.auth.credentials import AnonymousCredentials

from gpuplan.core.audit.advice import InstanceAudit
from gpuplan.core.audit.split import AuditRule
from gpuplan.core.catalog.offers import Provider
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.lifecycle.instances import GpuInstance, InstanceState
from gpuplan.core.policy.models import AuditSettings
from gpuplan.providers.azure.metrics import PLATFORM_NAMESPACE
from gpuplan.providers.azure.provider import AzureAdapter
from gpuplan.providers.base import CloudAdapter
from gpuplan.providers.fake import FakeAdapter
from gpuplan.providers.gcp.monitoring import DEFAULT_CPU, DEFAULT_MEMORY, PAGE_SIZE
from gpuplan.providers.gcp.provider import GcpAdapter
from gpuplan.providers.prometheus import PrometheusSource
from gpuplan.usecases.audit.live import LiveAudit, audit_fleet
from tests.fakes.azure_arm import AzureFake
from tests.fakes.fixtures import ca_file, catalog, test_ca  # noqa: F401
from tests.fakes.gcp_compute import GcpComputeFake
from tests.fakes.gcp_monitoring import MonitoringFake, serve_monitoring
from tests.fakes.http import serve
from tests.fakes.prometheus import PrometheusFake

END = datetime(2026, 12, 2, 10, tzinfo=UTC)
START = END - timedelta(days=7)
HOURS = [START + timedelta(hours=h) for h in range(7 * 24)]


@dataclass(frozen=True)
class Workload:
    util: float
    memory: float
    cpu: float
    known_hours: int
    """Hours with metrics, counted back from the end of the week."""


WORKLOADS: dict[str, Workload | None] = {
    "trainer": Workload(80.0, 60.0, 40.0, 168),
    "forgotten": Workload(0.0, 0.0, 2.0, 168),
    "input-bound": Workload(30.0, 50.0, 95.0, 168),
    "late-agent": Workload(80.0, 60.0, 40.0, 84),
    "agent-less": None,
}
KINDS = list(WORKLOADS)


def workload_of(index: int) -> str:
    return KINDS[index % len(KINDS)]


def hours_of(w: Workload) -> list[datetime]:
    return HOURS[len(HOURS) - w.known_hours :]


def expected(w: Workload, price: Decimal) -> dict[str, Decimal]:
    """The split the published metrics imply, computed here without the audit's code."""
    known, unknown = price * w.known_hours, price * (len(HOURS) - w.known_hours)
    if w.util == 0 and w.memory == 0 and w.cpu < 10:
        return {"busy": Decimal(0), "waiting": Decimal(0), "idle": known, "unknown": unknown}
    share = Decimal(str(w.util)) / 100
    return {"busy": known * share, "waiting": known * (1 - share), "idle": Decimal(0),
            "unknown": unknown}  # fmt: skip


def run(adapter: CloudAdapter, catalog: Catalog) -> LiveAudit:  # noqa: F811
    result = audit_fleet([adapter], catalog, AuditRule(), AuditSettings(), start=START, end=END,
                         period_minutes=60)  # fmt: skip
    assert result.problems == []
    return result


def check_split(result: LiveAudit, n: int, workload_by_id: Callable[[str], str]) -> None:
    """Per workload, dollars as the metrics say; agent-less instances skipped, named."""
    dark = [i for i in range(n) if workload_of(i) == "agent-less"]
    assert len(result.audits) == n - len(dark)
    assert len(result.skipped) == len(dark)
    assert all(line.endswith("no GPU metrics (unknown)") for line in result.skipped)
    got: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    want: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    for a in result.audits:
        kind = workload_by_id(a.subject.instance_id)
        w = WORKLOADS[kind]
        assert w is not None
        assert a.split.paid == a.subject.hourly_usd * len(HOURS)  # every hour billed
        for part, amount in expected(w, a.subject.hourly_usd).items():
            got[kind, part] += getattr(a.split, part)
            want[kind, part] += amount
        check_advice(kind, a)
    assert set(want) == {(k, p) for k in KINDS[:-1] for p in ("busy", "waiting", "idle", "unknown")}
    for key, amount in want.items():
        assert abs(got[key] - amount) < Decimal("0.01"), (key, got[key], amount)


def check_advice(kind: str, a: InstanceAudit) -> None:
    kinds = {v.kind.value for v in a.advice}
    if kind == "trainer":
        assert a.advice == (), (a.subject.instance_id, kinds)  # well used: no advice
    elif kind == "forgotten":
        assert "stop-idle" in kinds
    elif kind == "input-bound":
        assert "input-bound" in kinds and "stop-idle" not in kinds


def pages(points: int, size: int = PAGE_SIZE) -> int:
    """ListTimeSeries calls for one query: one per page of at most ``size`` points."""
    return max(1, math.ceil(points / size))


# --- GCP: Compute REST fake + Cloud Monitoring gRPC fake -----------------------------

TOTAL_BYTES = 40e9


@pytest.mark.parametrize("n", [10, 100])
def test_gcp_week_audit(n: int, catalog: Catalog) -> None:  # noqa: F811
    compute, monitoring = GcpComputeFake(), MonitoringFake()
    kinds: dict[str, str] = {}
    for i in range(n):
        iid = compute.add("proj", "us-central1-a", f"vm{i}", "a2-highgpu-1g",
                          lastStartTimestamp="2026-11-01T00:00:00+00:00")  # fmt: skip
        kinds[iid] = workload_of(i)
        w = WORKLOADS[kinds[iid]]
        for at in hours_of(w) if w else ():
            at += timedelta(minutes=30)
            used = TOTAL_BYTES * w.memory / 100
            monitoring.publish("proj", iid, 0, at, w.util)
            monitoring.publish("proj", iid, 0, at, used, metric_type=DEFAULT_MEMORY,
                               memory_state="used")  # fmt: skip
            monitoring.publish("proj", iid, 0, at, TOTAL_BYTES - used,
                               metric_type=DEFAULT_MEMORY, memory_state="free")  # fmt: skip
            monitoring.publish("proj", iid, 0, at, w.cpu / 100, metric_type=DEFAULT_CPU)
    with serve(compute) as url, serve_monitoring(monitoring) as address:
        provider = GcpAdapter("proj", compute_endpoint=url,
                               monitoring_endpoint=f"http://{address}",
                               credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
                               catalog=catalog)  # fmt: skip
        result = run(provider, catalog)
    check_split(result, n, kinds.__getitem__)
    # Points per query: one a known hour per series (memory has used and free series).
    known = sum(w.known_hours for i in range(n) if (w := WORKLOADS[workload_of(i)]))
    assert compute.calls["aggregatedList"] == math.ceil(n / 500)
    assert monitoring.calls["ListTimeSeries"] == pages(known) + pages(2 * known) + pages(known)


# --- Azure: ARM + batch metrics fake over TLS -----------------------------------------


class _Token:
    def get_token(self, *scopes: str, **kwargs: object) -> AccessToken:
        return AccessToken("t", 4_102_444_800)


@pytest.fixture
def azure_tls(test_ca: trustme.CA, ca_file: Path, monkeypatch: pytest.MonkeyPatch) -> trustme.CA:  # noqa: F811
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca_file))
    return test_ca


@pytest.mark.parametrize("n", [10, 100])
def test_azure_week_audit(n: int, catalog: Catalog, azure_tls: trustme.CA) -> None:  # noqa: F811
    fake = AzureFake(page_size=100)
    kinds: dict[str, str] = {}
    for i in range(n):
        rid = fake.add_vm("sub", "rg", f"vm{i}", "Standard_NC24ads_A100_v4")
        kinds[rid.lower()] = workload_of(i)
        w = WORKLOADS[kinds[rid.lower()]]
        for at in hours_of(w) if w else ():
            at += timedelta(minutes=30)
            fake.publish(rid, 0, at, w.util)
            fake.publish(rid, 0, at, 81920 * w.memory / 100, metric="memory_used")
            fake.publish(rid, 0, at, 81920.0, metric="memory_total")
            fake.publish(rid, 0, at, w.cpu, namespace=PLATFORM_NAMESPACE, metric="Percentage CPU")
    with serve(fake, azure_tls) as url:
        provider = AzureAdapter("sub", credential=_Token(), arm_endpoint=url,
                                 metrics_endpoint=url, catalog=catalog,
                                 polling_interval_s=0)  # fmt: skip
        result = run(provider, catalog)
    check_split(result, n, lambda rid: kinds[rid.lower()])
    batches = math.ceil(n / 50)  # every running VM of the region, 50 to a call
    assert dict(fake.calls) == {
        "vms.listAll": math.ceil(n / 100),  # the fake's pages of 100 VMs
        "vmss.listAll": 1,
        "skus.list": 1,
        "metrics.getBatch": 2 * batches,  # the GPU namespace, then the platform CPU
    }
    assert set(fake.batch_sizes) == {min(50, n)}


# --- Prometheus (dcgm-exporter + node_exporter) on its HTTP API fake ----------------


@pytest.fixture
def prometheus() -> Iterator[tuple[PrometheusFake, str]]:
    fake = PrometheusFake()
    with serve(fake) as url:
        yield fake, url


@pytest.mark.parametrize("n", [10, 100])
def test_prometheus_week_audit(n: int, catalog: Catalog,  # noqa: F811
                               prometheus: tuple[PrometheusFake, str]) -> None:  # fmt: skip
    prom, url = prometheus
    instances = [
        GpuInstance(
            provider=Provider.AWS,
            account="1",
            region="us-east-1",
            instance_id=f"i-{i:017x}",
            instance_type="g5.xlarge",
            state=InstanceState.RUNNING,
            gpu="A10G",
            gpu_count=1,
            hourly_usd=Decimal("1.006"),
        )
        for i in range(n)
    ]
    for i, inst in enumerate(instances):
        w = WORKLOADS[workload_of(i)]
        key = inst.instance_id
        idle_seconds = 0.0
        for at in hours_of(w) if w else ():
            gpu = {"instance_id": key, "gpu": "0"}
            prom.publish({"__name__": "DCGM_FI_DEV_GPU_UTIL", **gpu}, at + timedelta(minutes=30),
                         w.util)  # fmt: skip
            used = 24576 * w.memory / 100
            prom.publish({"__name__": "DCGM_FI_DEV_FB_USED", **gpu}, at + timedelta(minutes=30),
                         used)  # fmt: skip
            prom.publish({"__name__": "DCGM_FI_DEV_FB_FREE", **gpu}, at + timedelta(minutes=30),
                         24576 - used)  # fmt: skip
            # node_exporter's idle counter, twice an hour: its rate gives the CPU
            for minute in (15, 45):
                prom.publish({"__name__": "node_cpu_seconds_total", "mode": "idle",
                              "instance_id": key, "cpu": "0"},
                             at + timedelta(minutes=minute), idle_seconds)  # fmt: skip
                idle_seconds += 1800 * (1 - w.cpu / 100)
    inner = FakeAdapter(Provider.AWS, instances, metrics=PrometheusSource(url))
    result = run(inner, catalog)
    kinds = {inst.instance_id: workload_of(i) for i, inst in enumerate(instances)}
    check_split(result, n, kinds.__getitem__)
    assert [c.method for c in inner.calls] == ["list_instances", "fetch_utilisation"]
    assert len(prom.queries) == 4  # utilisation, memory used, memory free, CPU: whatever n is
