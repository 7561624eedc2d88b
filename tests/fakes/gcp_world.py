"""A GCP world on wire fakes: Compute REST on 127.0.0.1, Cloud Monitoring over gRPC."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest
from google.auth.credentials import AnonymousCredentials

from gpuplan.core.catalog.query import Catalog
from gpuplan.providers.gcp.provider import GcpAdapter
from tests.fakes.fixtures import ca_file, catalog, test_ca  # noqa: F401
from tests.fakes.gcp_compute import GcpComputeFake
from tests.fakes.gcp_monitoring import MonitoringFake, serve_monitoring
from tests.fakes.http import serve
from tests.fakes.scenarios import Case, samples_of

PROJECT = "research-proj"


@dataclass
class GcpWorld:
    compute: GcpComputeFake
    monitoring: MonitoringFake
    compute_url: str
    monitoring_address: str
    catalog: Catalog

    def provider(self, project: str = PROJECT, **kw: Any) -> GcpAdapter:
        options: dict[str, Any] = {
            "compute_endpoint": self.compute_url,
            "monitoring_endpoint": "http://" + self.monitoring_address,
            "credentials": AnonymousCredentials(),
            "catalog": self.catalog,
            "retry_initial_s": 0.01,
            "retry_timeout_s": 1.0,
            "poll_interval_s": 0,
        }
        options.update(kw)
        return GcpAdapter(project, **options)

    def publish(self, iid: str, gpu: int, at: datetime, value: float, **kw: Any) -> None:
        self.monitoring.publish(PROJECT, iid, gpu, at, value, **kw)

    def build(self, case: Case, project: str = PROJECT) -> str:
        """One instance per scenario case, plus its agent's samples; returns its id."""
        extra: dict[str, Any] = {"labels": dict(case.labels)}
        extra["lastStartTimestamp"] = case.started.isoformat()
        if not case.running:
            extra["status"] = "TERMINATED"
        if case.spot:
            extra["scheduling"] = {"provisioningModel": "SPOT", "instanceTerminationAction": "STOP"}
        if case.managed:
            extra["metadata"] = {
                "items": [
                    {
                        "key": "created-by",
                        "value": f"projects/1/zones/z/instanceGroupManagers/{case.name}",
                    }
                ]
            }
        zone = "europe-west4-a" if case.second_location else "us-central1-a"
        machine = "a3-highgpu-8g" if case.gpus == 8 else "a2-highgpu-1g"
        iid = self.compute.add(project, zone, case.name, machine, **extra)
        for gpu, at, value in samples_of(case):
            self.monitoring.publish(project, iid, gpu, at, value)
        return iid


@pytest.fixture
def gcp(catalog: Catalog) -> Iterator[GcpWorld]:  # noqa: F811
    compute = GcpComputeFake()
    monitoring = MonitoringFake()
    with serve(compute) as url, serve_monitoring(monitoring) as address:
        yield GcpWorld(compute, monitoring, url, address, catalog)
