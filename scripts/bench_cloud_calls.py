"""Benchmark (not a test): API calls and wall time per survey on moto and the GCP and
Azure fakes.

For 10, 100 and 1,000 one-GPU instances with an hour of samples each (utilisation, GPU
memory and CPU), one survey = list the instances + fetch the signals. Calls must stay
flat or grow with pages (AWS ListMetrics: one paginated call per agent metric;
GetMetricData: 500 queries a call; GCP aggregatedList: 500 instances a page;
ListTimeSeries: one request per signal, paged by datapoints; Azure listAll: pages of 100 in
the fake; metrics:getBatch: 50 VMs a call, GPU metrics and CPU apart), never one call
per instance.

Run: ``python scripts/bench_cloud_calls.py`` (from the repository root).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import trustme
from azure.core.credentials import AccessToken
from google.auth.credentials import AnonymousCredentials

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuplan.loaders.catalog import load_catalog
from gpuplan.providers.aws.provider import AwsAdapter
from gpuplan.providers.azure.metrics import PLATFORM_NAMESPACE
from gpuplan.providers.azure.provider import AzureAdapter
from gpuplan.providers.gcp.monitoring import DEFAULT_CPU, DEFAULT_MEMORY
from gpuplan.providers.gcp.provider import GcpAdapter
from gpuplan.usecases.clouds.entries import register_facts
from tests.fakes.azure_arm import AzureFake
from tests.fakes.gcp_compute import GcpComputeFake
from tests.fakes.gcp_monitoring import MonitoringFake, serve_monitoring
from tests.fakes.http import serve
from tests.fakes.scenarios import PERIODS, WINDOW

register_facts()  # every listed cloud's facts, as the CLI registers them first

SIZES = (10, 100, 1000)


class _Token:
    def get_token(self, *scopes: str, **kwargs: object) -> AccessToken:
        return AccessToken("bench", 4_102_444_800)


def bench_gcp(n: int) -> str:
    compute, monitoring = GcpComputeFake(), MonitoringFake()
    for i in range(n):
        iid = compute.add("p", "us-central1-a", f"vm{i}", "a2-highgpu-1g")
        for begin in PERIODS:
            at = begin + timedelta(seconds=30)
            monitoring.publish("p", iid, 0, at, 1.0)
            monitoring.publish("p", iid, 0, at, 1e9, metric_type=DEFAULT_MEMORY,
                               memory_state="used")  # fmt: skip
            monitoring.publish("p", iid, 0, at, 7e10, metric_type=DEFAULT_MEMORY,
                               memory_state="free")  # fmt: skip
            monitoring.publish("p", iid, 0, at, 0.02, metric_type=DEFAULT_CPU)
    with serve(compute) as url, serve_monitoring(monitoring) as address:
        provider = GcpAdapter(
            "p",
            compute_endpoint=url,
            monitoring_endpoint=f"http://{address}",
            credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
            catalog=load_catalog(),
        )
        started = time.perf_counter()
        listed = provider.list_instances()
        provider.fetch_utilisation(listed, start=WINDOW[0], end=WINDOW[1], period_minutes=5)
        wall = time.perf_counter() - started
    calls = {**compute.calls, **monitoring.calls}
    total = sum(calls.values())
    detail = ", ".join(f"{k} {v}" for k, v in sorted(calls.items()))
    return f"| GCP | {n} | {total} | {detail} | {wall:.2f} |"


def bench_azure(n: int, ca: trustme.CA) -> str:
    fake = AzureFake(page_size=100)
    for i in range(n):
        rid = fake.add_vm("s", "rg", f"vm{i}", "Standard_NC24ads_A100_v4")
        for begin in PERIODS:
            at = begin + timedelta(seconds=30)
            fake.publish(rid, 0, at, 1.0)
            fake.publish(rid, 0, at, 800.0, metric="memory_used")
            fake.publish(rid, 0, at, 81559.0, metric="memory_total")
            fake.publish(rid, 0, at, 2.0, namespace=PLATFORM_NAMESPACE, metric="Percentage CPU")
    with serve(fake, ca) as url:
        provider = AzureAdapter(
            "s",
            credential=_Token(),
            arm_endpoint=url,
            metrics_endpoint=url,
            catalog=load_catalog(),
            polling_interval_s=0,
        )
        started = time.perf_counter()
        listed = provider.list_instances()
        provider.fetch_utilisation(listed, start=WINDOW[0], end=WINDOW[1], period_minutes=5)
        wall = time.perf_counter() - started
    total = sum(fake.calls.values())
    detail = ", ".join(f"{k} {v}" for k, v in sorted(fake.calls.items()))
    return f"| Azure | {n} | {total} | {detail} | {wall:.2f} |"


def bench_aws(n: int) -> str:
    import boto3
    from moto import mock_aws

    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench",
                      MOTO_EC2_LOAD_DEFAULT_AMIS="false")  # fmt: skip
    with mock_aws():
        ec2 = boto3.client("ec2", region_name="us-east-1")
        cw = boto3.client("cloudwatch", region_name="us-east-1")
        ids = [
            i["InstanceId"]
            for i in ec2.run_instances(
                ImageId="ami-12345678", MinCount=n, MaxCount=n, InstanceType="g5.xlarge"
            )["Instances"]
        ]
        rows = []
        for iid in ids:
            dims = [{"Name": "InstanceId", "Value": iid}, {"Name": "index", "Value": "0"}]
            # One datapoint per series: moto lists a series once per stored datapoint,
            # CloudWatch once, so this keeps moto's ListMetrics pages true to CloudWatch.
            for begin in PERIODS[-1:]:
                at = begin + timedelta(seconds=30)
                for name, value in (("nvidia_smi_utilization_gpu", 1.0),
                                    ("nvidia_smi_memory_used", 300.0),
                                    ("nvidia_smi_memory_total", 23028.0)):  # fmt: skip
                    rows.append({"MetricName": name, "Dimensions": dims, "Timestamp": at,
                                 "Value": value})  # fmt: skip
        for i in range(0, len(rows), 1000):
            cw.put_metric_data(Namespace="CWAgent", MetricData=rows[i : i + 1000])
        calls: Counter[str] = Counter()
        for client in (ec2, cw):
            client.meta.events.register(
                "before-call.*.*", lambda model, **_: calls.update([model.name])
            )
        provider = AwsAdapter("us-east-1", ec2_client=ec2, cloudwatch_client=cw,
                               catalog=load_catalog())  # fmt: skip
        started = time.perf_counter()
        listed = provider.list_instances()
        provider.fetch_utilisation(listed, start=WINDOW[0], end=WINDOW[1], period_minutes=5)
        wall = time.perf_counter() - started
    total = sum(calls.values())
    detail = ", ".join(f"{k} {v}" for k, v in sorted(calls.items()))
    return f"| AWS | {n} | {total} | {detail} | {wall:.2f} |"


def main() -> None:
    ca = trustme.CA()
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "ca.pem"
        ca.cert_pem.write_to_path(str(bundle))
        os.environ["REQUESTS_CA_BUNDLE"] = str(bundle)
        print("| cloud | instances | API calls | calls by name | wall s |")
        print("|---|---:|---:|---|---:|")
        clouds = sys.argv[1:] or ["aws", "gcp", "azure"]  # e.g. `... gcp azure`
        for n in SIZES:
            if "aws" in clouds:
                print(bench_aws(n), flush=True)
        for n in SIZES:
            if "gcp" in clouds:
                print(bench_gcp(n), flush=True)
        for n in SIZES:
            if "azure" in clouds:
                print(bench_azure(n, ca), flush=True)


if __name__ == "__main__":
    main()
