"""Benchmark (not a test): API calls per `gpuplan audit` run over 7 days of metrics.

For 10, 100 and 1,000 one-GPU instances, one audit run = list the instances + read
utilisation, GPU memory and CPU over 7 days at hourly aggregates + the audit itself
(split, right-sizing, advice), through ``usecases.audit_live.audit_fleet``, the code the
CLI runs. AWS on moto, GCP and Azure on the wire fakes, Prometheus on its fake (listing
from the in-memory provider, metrics from Prometheus, as ``idle.metrics.prometheus``
wires it). GCP, Azure and Prometheus get a sample in every hour of the week for every
series (168 per series), as a running agent gives: Cloud Monitoring pages by
datapoints (a FULL page holds at most ``page_size`` points), so its call count depends
on them. AWS gets one datapoint per series (moto lists a series once per stored
datapoint and slows down with many: 1 of 168 hours known); its call count depends on
series, not datapoints, as long as a GetMetricData call stays under its 100,800
datapoints (168 hourly points x 500 queries = 84,000).

Run: ``python scripts/bench_audit_calls.py [aws gcp azure prometheus] [--sizes 10,100]``
(repo root).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import trustme
from azure.core.credentials import AccessToken
from google.auth.credentials import AnonymousCredentials

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuplan.core.audit.split import AuditRule
from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.instances import GpuInstance, InstanceState
from gpuplan.core.policy.models import AuditSettings
from gpuplan.loaders.catalog import load_catalog
from gpuplan.providers.aws.provider import AwsAdapter
from gpuplan.providers.azure.metrics import PLATFORM_NAMESPACE
from gpuplan.providers.azure.provider import AzureAdapter
from gpuplan.providers.base import CloudAdapter
from gpuplan.providers.fake import FakeAdapter
from gpuplan.providers.gcp.monitoring import DEFAULT_CPU, DEFAULT_MEMORY
from gpuplan.providers.gcp.provider import GcpAdapter
from gpuplan.providers.prometheus import PrometheusSource
from gpuplan.usecases.audit.live import audit_fleet
from tests.fakes.azure_arm import AzureFake
from tests.fakes.gcp_compute import GcpComputeFake
from tests.fakes.gcp_monitoring import MonitoringFake, serve_monitoring
from tests.fakes.http import serve
from tests.fakes.prometheus import PrometheusFake

SIZES = (10, 100, 1000)
END = datetime(2026, 12, 2, 10, tzinfo=UTC)
START = END - timedelta(days=7)
HOURS = [START + timedelta(hours=h, minutes=30) for h in range(7 * 24)]
CATALOG = load_catalog()


def _audit(adapter: CloudAdapter, start: datetime = START) -> tuple[str, float]:
    """Audited instances and the share of their paid dollars with metrics behind them."""
    started = time.perf_counter()
    result = audit_fleet([adapter], CATALOG, AuditRule(), AuditSettings(), start=start,
                         end=start + timedelta(days=7), period_minutes=60)  # fmt: skip
    wall = time.perf_counter() - started
    assert not result.problems, result.problems
    paid = sum(a.split.paid for a in result.audits)
    known = 1 - float(sum(a.split.unknown for a in result.audits) / paid) if paid else 0.0
    return f"{len(result.audits)} ({known:.0%} known)", wall


def _row(cloud: str, n: int, calls: dict[str, int], audited: str, wall: float) -> str:
    detail = ", ".join(f"{k} {v}" for k, v in sorted(calls.items()))
    return f"| {cloud} | {n} | {audited} | {sum(calls.values())} | {detail} | {wall:.2f} |"


class _Token:
    def get_token(self, *scopes: str, **kwargs: object) -> AccessToken:
        return AccessToken("bench", 4_102_444_800)


def bench_gcp(n: int) -> str:
    compute, monitoring = GcpComputeFake(), MonitoringFake()
    for i in range(n):
        iid = compute.add("p", "us-central1-a", f"vm{i}", "a2-highgpu-1g",
                          lastStartTimestamp="2026-11-01T00:00:00+00:00")  # fmt: skip
        for at in HOURS:
            monitoring.publish("p", iid, 0, at, 0.3)
            monitoring.publish("p", iid, 0, at, 1e10, metric_type=DEFAULT_MEMORY,
                               memory_state="used")  # fmt: skip
            monitoring.publish("p", iid, 0, at, 3e10, metric_type=DEFAULT_MEMORY,
                               memory_state="free")  # fmt: skip
            monitoring.publish("p", iid, 0, at, 0.2, metric_type=DEFAULT_CPU)
    with serve(compute) as url, serve_monitoring(monitoring) as address:
        provider = GcpAdapter("p", compute_endpoint=url, monitoring_endpoint=f"http://{address}",
                               credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
                               catalog=CATALOG)  # fmt: skip
        audited, wall = _audit(provider)
    return _row("GCP", n, {**compute.calls, **monitoring.calls}, audited, wall)


def bench_azure(n: int) -> str:
    fake = AzureFake(page_size=100)
    for i in range(n):
        rid = fake.add_vm("s", "rg", f"vm{i}", "Standard_NC24ads_A100_v4")
        for at in HOURS:
            fake.publish(rid, 0, at, 30.0)
            fake.publish(rid, 0, at, 20000.0, metric="memory_used")
            fake.publish(rid, 0, at, 81559.0, metric="memory_total")
            fake.publish(rid, 0, at, 20.0, namespace=PLATFORM_NAMESPACE, metric="Percentage CPU")
    with serve(fake, CA) as url:
        provider = AzureAdapter("s", credential=_Token(), arm_endpoint=url,
                                 metrics_endpoint=url, catalog=CATALOG,
                                 polling_interval_s=0)  # fmt: skip
        audited, wall = _audit(provider)
    return _row("Azure", n, dict(fake.calls), audited, wall)


def bench_aws(n: int) -> str:
    import boto3
    from moto import mock_aws

    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
                      MOTO_EC2_LOAD_DEFAULT_AMIS="false")  # fmt: skip
    # moto launches instances now: the week audited starts at the next hour, so every
    # period is billed time (CloudWatch would refuse future datapoints; moto does not).
    start = datetime.now(UTC).replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
    days = [start + timedelta(days=d, minutes=30) for d in range(7)]
    with mock_aws():
        ec2 = boto3.client("ec2", region_name="us-east-1")
        cw = boto3.client("cloudwatch", region_name="us-east-1")
        launched = ec2.run_instances(
            ImageId="ami-12345678", MinCount=n, MaxCount=n, InstanceType="g5.xlarge"
        )
        ids = [i["InstanceId"] for i in launched["Instances"]]
        rows = []
        for iid in ids:
            dims = [{"Name": "InstanceId", "Value": iid}, {"Name": "index", "Value": "0"}]
            for name, value in (("nvidia_smi_utilization_gpu", 30.0),
                                ("nvidia_smi_memory_used", 8000.0),
                                ("nvidia_smi_memory_total", 23028.0)):  # fmt: skip
                rows.append({"MetricName": name, "Dimensions": dims, "Timestamp": days[-1],
                             "Value": value})  # fmt: skip
        for i in range(0, len(rows), 1000):
            cw.put_metric_data(Namespace="CWAgent", MetricData=rows[i : i + 1000])
        calls: Counter[str] = Counter()
        for client in (ec2, cw):
            client.meta.events.register("before-call.*.*",
                                        lambda model, **_: calls.update([model.name]))  # fmt: skip
        provider = AwsAdapter("us-east-1", ec2_client=ec2, cloudwatch_client=cw, catalog=CATALOG)
        audited, wall = _audit(provider, start)
    return _row("AWS (moto)", n, dict(calls), audited, wall)


def bench_prometheus(n: int) -> str:
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
    prom = PrometheusFake()
    for inst in instances:
        key = inst.instance_id
        idle_seconds = 0.0
        for at in HOURS:
            for metric, value in (("DCGM_FI_DEV_GPU_UTIL", 30.0), ("DCGM_FI_DEV_FB_USED", 8000.0),
                                  ("DCGM_FI_DEV_FB_FREE", 16000.0)):  # fmt: skip
                prom.publish({"__name__": metric, "instance_id": key, "gpu": "0"}, at, value)
            for minute in (-15, 15):  # node_exporter's idle counter: CPU 20% busy
                prom.publish({"__name__": "node_cpu_seconds_total", "mode": "idle",
                              "instance_id": key, "cpu": "0"},
                             at + timedelta(minutes=minute), idle_seconds)  # fmt: skip
                idle_seconds += 1800 * 0.8
    with serve(prom) as url:
        inner = FakeAdapter(Provider.AWS, instances, metrics=PrometheusSource(url))
        audited, wall = _audit(inner)
    calls = Counter(c.method for c in inner.calls if c.method == "list_instances")
    calls["query_range"] = len(prom.queries)
    return _row("Prometheus", n, dict(calls), audited, wall)


CA = trustme.CA()


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "ca.pem"
        CA.cert_pem.write_to_path(str(bundle))
        os.environ["REQUESTS_CA_BUNDLE"] = str(bundle)
        print("| source | instances | audited (dollars with metrics) | API calls | calls by name "
              "| wall s |")  # fmt: skip
        print("|---|---:|---:|---:|---|---:|")
        benches = {"aws": bench_aws, "gcp": bench_gcp, "azure": bench_azure,
                   "prometheus": bench_prometheus}  # fmt: skip
        args = sys.argv[1:]
        sizes = SIZES
        if "--sizes" in args:
            at = args.index("--sizes")
            sizes = tuple(int(n) for n in args[at + 1].split(","))
            args = args[:at] + args[at + 2 :]
        for name in args or list(benches):
            for n in sizes:
                print(benches[name](n), flush=True)


if __name__ == "__main__":
    main()
