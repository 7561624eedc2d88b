"""One validation for every provider number (issue 28, item 6): finite and plausible."""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpuplan.core.catalog.discovery import FoundType, new_shapes
from gpuplan.core.catalog.offers import Provider
from gpuplan.core.catalog.provider_values import Quantity, price_per_gpu_problem, value_problem
from gpuplan.loaders.catalog import load_gpus

Q = Quantity


@pytest.mark.parametrize(
    ("quantity", "value", "ok"),
    [
        (Q.GPU_HOUR_USD, Decimal("1e-300"), False),
        (Q.GPU_HOUR_USD, Decimal("1e-7"), False),
        (Q.GPU_HOUR_USD, Decimal("0.0099"), False),
        (Q.GPU_HOUR_USD, Decimal("0.01"), True),
        (Q.GPU_HOUR_USD, Decimal(1000), True),
        (Q.GPU_HOUR_USD, Decimal("1000.01"), False),
        (Q.GPU_HOUR_USD, Decimal("1e308"), False),
        (Q.GPU_HOUR_USD, Decimal("NaN"), False),
        (Q.GPU_HOUR_USD, Decimal("Infinity"), False),
        (Q.GPU_HOUR_USD, Decimal(-5), False),
        (Q.GPU_COUNT, 0, False),
        (Q.GPU_COUNT, 0.1667, True),  # a sixth of an A10: fractional GPUs are kept
        (Q.GPU_COUNT, 72, True),
        (Q.GPU_COUNT, 73, False),
        (Q.GPU_COUNT, 1e20, False),
        (Q.GPU_COUNT, float("nan"), False),
        (Q.GPU_COUNT, True, False),
        (Q.GPU_MEMORY_GB, 0.5, False),
        (Q.GPU_MEMORY_GB, 1, True),
        (Q.GPU_MEMORY_GB, 1024, True),
        (Q.GPU_MEMORY_GB, 1025, False),
        (Q.VCPUS, 0, False),
        (Q.MEMORY_GB, float("inf"), False),
        (Q.GPU_COUNT, "12abc", False),
    ],
)
def test_value_problem(quantity: Quantity, value: object, ok: bool) -> None:
    why = value_problem(quantity, value)
    assert (why is None) is ok, why
    if why is not None:
        assert quantity.value in why and len(why) < 160


def test_prices_are_judged_per_gpu() -> None:
    assert price_per_gpu_problem(Decimal("98.32"), 8) is None
    assert price_per_gpu_problem(Decimal("0.09"), 0.1667) is None  # spot of a sixth of a GPU
    assert price_per_gpu_problem(Decimal("4000"), 8) is None  # $500 per GPU-hour
    assert "implausible" in (price_per_gpu_problem(Decimal("9000"), 8) or "")
    assert "implausible" in (price_per_gpu_problem(Decimal("0.05"), 8) or "")


def _found(name: str, **numbers: float) -> FoundType:
    base: dict[str, float] = {"gpu_count": 8, "vcpus": 192, "memory_gb": 2048}
    base.update(numbers)
    return FoundType(
        instance_type=name, region="us-east-1", gpu_name="H100", gpu_memory_gb=80,
        gpu_count=base["gpu_count"], vcpus=int(base["vcpus"]), memory_gb=base["memory_gb"],
    )  # fmt: skip


def test_a_discovered_type_with_an_implausible_number_is_reported_never_added() -> None:
    found = [
        _found("p9.huge", gpu_count=1e20),
        _found("p9.none", gpu_count=0),
        _found("p9.nan", memory_gb=float("nan")),
        _found("p9.half", gpu_count=0.5),
        _found("p9.fine"),
    ]
    out = new_shapes(Provider.AWS, found, load_gpus(), {})
    assert sorted(out.shapes) == ["p9.fine", "p9.half"]
    assert out.shapes["p9.half"].gpu_count == 0.5
    assert [line.split(":")[0] for line in out.implausible] == [
        "p9.huge in us-east-1",
        "p9.nan in us-east-1",
        "p9.none in us-east-1",
    ]
    assert "GPU count 1.000E+20 is implausible" in out.implausible[0]
