"""Benchmark (not a test): API calls and wall time per survey on the GCP and Azure fakes.

For 10, 100 and 1,000 one-GPU instances with an hour of samples each, one survey =
list the instances + fetch utilisation. Calls must stay flat or grow with pages
(GCP aggregatedList: 500 instances a page; ListTimeSeries: one request, paged by
series; Azure listAll: pages of 100 in the fake; metrics:getBatch: 50 VMs a call),
never one call per instance.

Run: ``python scripts/bench_cloud_calls.py`` (from the repository root).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import trustme
from azure.core.credentials import AccessToken
from google.auth.credentials import AnonymousCredentials

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuplan.loaders.catalog import load_catalog
from gpuplan.providers.azure.provider import AzureProvider
from gpuplan.providers.gcp.provider import GcpProvider
from tests.cloudfakes.azure_arm import AzureFake
from tests.cloudfakes.gcp_compute import GcpComputeFake
from tests.cloudfakes.gcp_monitoring import MonitoringFake, serve_monitoring
from tests.cloudfakes.http import serve
from tests.cloudfakes.scenarios import PERIODS, WINDOW

SIZES = (10, 100, 1000)


class _Token:
    def get_token(self, *scopes: str, **kwargs: object) -> AccessToken:
        return AccessToken("bench", 4_102_444_800)


def bench_gcp(n: int) -> str:
    compute, monitoring = GcpComputeFake(), MonitoringFake()
    for i in range(n):
        iid = compute.add("p", "us-central1-a", f"vm{i}", "a2-highgpu-1g")
        for begin in PERIODS:
            monitoring.publish("p", iid, 0, begin + timedelta(seconds=30), 1.0)
    with serve(compute) as url, serve_monitoring(monitoring) as address:
        provider = GcpProvider(
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
            fake.publish(rid, 0, begin + timedelta(seconds=30), 1.0)
    with serve(fake, ca) as url:
        provider = AzureProvider(
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


def main() -> None:
    ca = trustme.CA()
    with tempfile.TemporaryDirectory() as tmp:
        bundle = Path(tmp) / "ca.pem"
        ca.cert_pem.write_to_path(str(bundle))
        os.environ["REQUESTS_CA_BUNDLE"] = str(bundle)
        print("| cloud | instances | API calls | calls by name | wall s |")
        print("|---|---:|---:|---|---:|")
        for n in SIZES:
            print(bench_gcp(n), flush=True)
        for n in SIZES:
            print(bench_azure(n, ca), flush=True)


if __name__ == "__main__":
    main()
