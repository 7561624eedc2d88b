"""The pure parts of discovery and of carrying block-sold prices through a refresh."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from gpuplan.core.catalog.discovery import FoundType, missing_types, new_shapes, resolve_gpu
from gpuplan.core.catalog.gpus import GpuTable
from gpuplan.core.catalog.offers import BASE_MODELS, Offer, PricingModel, Provider
from gpuplan.core.catalog.refresh import carry_unread
from gpuplan.loaders.catalog import load_gpus

OLD = date(2024, 12, 31)
NEW = date(2026, 12, 2)


@pytest.fixture(scope="module")
def gpus() -> GpuTable:
    return load_gpus()


def _found(name: str, gpu: str, memory: float | None = None, **kw: object) -> FoundType:
    values: dict[str, object] = {
        "instance_type": name,
        "region": "us-east-1",
        "gpu_name": gpu,
        "gpu_count": 8.0,
        "vcpus": 96,
        "memory_gb": 1152.0,
        "gpu_memory_gb": memory,
    }
    values.update(kw)
    return FoundType(**values)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("gpu", "memory", "canonical"),
    [
        ("A100", 40, "A100-40GB"),
        ("A100", 80, "A100-80GB"),
        ("A100", None, None),  # ambiguous without its memory: never guessed
        ("V100", 32, "V100-32GB"),
        ("H100", 80, "H100"),
        ("L40S", 45, "L40S"),  # the memory spelling fails, the name alone resolves
        ("nvidia-b200", 180, "B200"),
        ("B300", 269, "B300"),
        ("T4g", 16, None),
        ("Radeon Pro V520", 8, None),
    ],
)
def test_resolve_gpu(gpus: GpuTable, gpu: str, memory: float | None, canonical: str | None) -> None:
    assert resolve_gpu(_found("x.large", gpu, memory), gpus) == canonical


def test_size_name_candidates_are_tried_in_turn(gpus: GpuTable) -> None:
    found = _found("Standard_ND128isr_NDR_GB200_v6", "NDR GB200", candidates=("NDR", "GB200"))
    assert resolve_gpu(found, gpus) == "GB200"


def test_new_shapes_skip_known_types_fractions_and_unknown_gpus(gpus: GpuTable) -> None:
    known_offer = Offer(
        provider=Provider.AWS,
        instance_type="p4d.24xlarge",
        region="us-east-1",
        gpu="A100-40GB",
        gpu_count=8,
        gpu_memory_gb=40,
        vcpus=96,
        memory_gb=1152,
        on_demand_hourly=Decimal("21.96"),
        as_of=NEW,
        source="t",
    )
    found = [
        _found("p4d.24xlarge", "A100", 40),
        _found("p6-b300.48xlarge", "B300", 269, region="us-west-2"),
        _found("p6-b300.48xlarge", "B300", 269, region="us-east-2"),
        _found("g6f.large", "L4", 3, gpu_count=0.0),
        _found("g5g.xlarge", "T4g", 16, gpu_count=1.0),
        _found("g5g.2xlarge", "T4g", 16, gpu_count=1.0, region="us-west-2"),
    ]
    result = new_shapes(Provider.AWS, found, gpus, {"p4d.24xlarge": known_offer})
    assert list(result.shapes) == ["p6-b300.48xlarge"]
    b300 = result.shapes["p6-b300.48xlarge"]
    assert (b300.gpu, b300.gpu_count, b300.gpu_memory_gb) == ("B300", 8.0, 269)
    assert all(b300.price(m) is None for m in PricingModel)
    assert result.seen == {"p6-b300.48xlarge": {"us-west-2", "us-east-2"}}
    (unknown,) = result.unknown
    assert unknown.name == "T4g"
    assert unknown.instance_types == ("g5g.2xlarge", "g5g.xlarge")
    assert unknown.regions == ("us-east-1", "us-west-2")
    assert "unknown GPU 'T4g' on g5g.2xlarge, g5g.xlarge" in unknown.message()
    assert missing_types([known_offer], found[1:], ["us-east-1"]) == [("p4d.24xlarge", "us-east-1")]


def _offer(name: str, region: str, as_of: date, **prices: Decimal) -> Offer:
    return Offer(
        provider=Provider.AWS,
        instance_type=name,
        region=region,
        gpu="H100",
        gpu_count=8,
        gpu_memory_gb=80,
        vcpus=192,
        memory_gb=2048,
        as_of=as_of,
        source="old",
        **prices,  # type: ignore[arg-type]
    )


def test_block_sold_prices_survive_a_refresh() -> None:
    p5 = _offer(
        "p5.48xlarge",
        "us-east-1",
        OLD,
        on_demand_hourly=Decimal("98.32"),
        capacity_block_hourly=Decimal("39.33"),
    )
    p6e = _offer("p6e-gb200.36xlarge", "us-east-1", OLD, capacity_block_hourly=Decimal("60"))
    elsewhere = _offer("p5.48xlarge", "eu-west-1", OLD, capacity_block_hourly=Decimal("40"))
    fresh_p5 = _offer("p5.48xlarge", "us-east-1", NEW, on_demand_hourly=Decimal("55.04"))
    out = carry_unread([p5, p6e, elsewhere], {"us-east-1": [fresh_p5]}, BASE_MODELS)
    assert list(out) == ["us-east-1"]  # regions not refreshed are not touched here
    merged, kept = out["us-east-1"]
    assert (merged.on_demand_hourly, merged.capacity_block_hourly) == (
        Decimal("55.04"),
        Decimal("39.33"),
    )
    assert merged.as_of == NEW
    assert "capacity_block carried from as_of 2024-12-31" in merged.source
    assert kept == p6e  # sold only in blocks: kept whole, with its own date
    # An API that reads capacity blocks replaces them instead.
    out = carry_unread([p5], {"us-east-1": [fresh_p5]}, frozenset(PricingModel))
    assert out["us-east-1"] == [fresh_p5]
