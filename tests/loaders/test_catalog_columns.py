"""One catalog column list: what the writer writes, both readers accept and require."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from gpuplan.core.catalog.offers import Offer, PricingModel, Provider
from gpuplan.loaders import catalog_columns
from gpuplan.loaders.catalog_writer import provider_csv


def test_the_writers_header_is_made_of_the_listed_columns() -> None:
    offer = Offer(
        provider=Provider.AWS, instance_type="p5.48xlarge", region="us-east-1", gpu="H100",
        gpu_count=8, gpu_memory_gb=80, vcpus=192, memory_gb=2048,
        on_demand_hourly=Decimal("98.32"), spot_hourly=Decimal("40"), source="test",
        as_of=date(2026, 12, 1),
    )  # fmt: skip
    header = provider_csv([offer]).splitlines()[0].split(",")
    assert set(header) <= catalog_columns.known_columns()
    assert set(catalog_columns.REQUIRED) <= set(header)
    assert header[: len(catalog_columns.WRITTEN_SHAPE)] == list(catalog_columns.WRITTEN_SHAPE)
    assert header[-len(catalog_columns.TAIL) :] == list(catalog_columns.TAIL)
    for model in (PricingModel.ON_DEMAND, PricingModel.SPOT):
        assert catalog_columns.price_columns(model)[0] in header
