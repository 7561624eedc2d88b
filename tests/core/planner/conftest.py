"""Planner fixtures: the real GPU table with a small, hand-written set of offers."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.core.catalog.gpus import GpuTable
from gpuplan.core.catalog.offers import Offer, Provider
from gpuplan.core.catalog.query import Catalog
from gpuplan.loaders.gpu_specs import load_gpu_table
from gpuplan.loaders.paths import bundled_pricing_dir
from tests.conftest import write_catalog


def offer(
    provider: Provider,
    instance_type: str,
    gpu: str,
    count: float,
    on_demand: str | None,
    *,
    region: str = "us-east-1",
    spot: str | None = None,
    r1: str | None = None,
    r3: str | None = None,
    network: float | None = 3200,
    memory: float = 80,
) -> Offer:
    return Offer(
        provider=provider,
        instance_type=instance_type,
        region=region,
        gpu=gpu,
        gpu_count=count,
        gpu_memory_gb=memory,
        vcpus=96,
        memory_gb=1024,
        network_gbps=network,
        on_demand_hourly=None if on_demand is None else Decimal(on_demand),
        spot_hourly=None if spot is None else Decimal(spot),
        reserved_1y_hourly=None if r1 is None else Decimal(r1),
        reserved_3y_hourly=None if r3 is None else Decimal(r3),
        as_of=date(2026, 12, 1),
        source="test",
    )


@pytest.fixture(scope="session")
def gpu_table() -> GpuTable:
    return load_gpu_table(bundled_pricing_dir())


@pytest.fixture
def catalog(gpu_table: GpuTable) -> Catalog:
    """H100 on 8-GPU instances (AWS, two regions), A100-80GB on 8 and 1, an A10G."""
    return Catalog(
        offers=(
            offer(
                Provider.AWS,
                "p5.48xlarge",
                "H100",
                8,
                "55.04",
                spot="30.10",
                r1="38.00",
                r3="26.00",
            ),
            offer(Provider.AWS, "p5.48xlarge", "H100", 8, "60.00", region="eu-west-1"),
            offer(
                Provider.AZURE,
                "ND_A100_8",
                "A100-80GB",
                8,
                "32.77",
                region="eastus",
                spot="16.00",
                network=1600,
            ),
            offer(
                Provider.GCP,
                "a2-ultragpu-1g",
                "A100-80GB",
                1,
                "5.07",
                region="us-central1",
                network=24,
            ),
            offer(
                Provider.AWS, "g5.xlarge", "A10G", 1, "1.006", spot="0.45", network=10, memory=24
            ),
        ),
        gpus=gpu_table,
    )


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    """A catalog folder for CLI runs (the shared small rows)."""
    return write_catalog(tmp_path / "pricing")
