"""One validation for every price and spec number of the catalog, wherever it comes from.

Price APIs, instance-type listings, the bundled catalog, ``--catalog-dir`` overlays
and SkyPilot imports are all input from outside: a price of ``1e-300`` would be
written as ``$0.0000`` and ranked first, a listing with 10^20 GPUs would reach the
catalog, a negative TFLOP/s figure would rank a negative cost first. Each number is
checked here, by what it measures, before it is used: finite, and inside a plausible
range for that quantity (the range is part of every message). Prices are checked per
GPU (an 8-GPU instance may cost eight times one GPU); fractional GPU counts (a sixth
of an A10) are kept. :func:`offer_problem` checks a catalog row's shape and prices
(``catalog refresh``, both catalog readers), :func:`gpu_spec_problem` a GPU table
entry. Pure: no SDK, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import StrEnum


class Quantity(StrEnum):
    """What a provider's number measures."""

    GPU_HOUR_USD = "price per GPU-hour"
    GPU_COUNT = "GPU count"
    GPU_MEMORY_GB = "memory per GPU (GB)"
    VCPUS = "vCPU count"
    MEMORY_GB = "host memory (GB)"
    NETWORK_GBPS = "network bandwidth (Gbit/s)"
    TFLOPS = "peak TFLOP/s"
    MEMORY_BANDWIDTH_TBS = "memory bandwidth (TB/s)"
    INTERCONNECT_GBS = "GPU-to-GPU bandwidth (GB/s)"
    NVLINK_DOMAIN = "GPUs in one NVLink domain"


@dataclass(frozen=True)
class Bounds:
    low: Decimal
    high: Decimal
    low_open: bool = False
    """True: ``low`` itself is refused (a GPU count must be above 0)."""
    unit: str = ""


BOUNDS: dict[Quantity, Bounds] = {
    Quantity.GPU_HOUR_USD: Bounds(Decimal("0.01"), Decimal(1000), unit="$"),
    Quantity.GPU_COUNT: Bounds(Decimal(0), Decimal(72), low_open=True),
    Quantity.GPU_MEMORY_GB: Bounds(Decimal(1), Decimal(1024)),
    Quantity.VCPUS: Bounds(Decimal(1), Decimal(2048)),
    Quantity.MEMORY_GB: Bounds(Decimal("0.5"), Decimal(65536)),
    Quantity.NETWORK_GBPS: Bounds(Decimal(0), Decimal(100_000)),
    Quantity.TFLOPS: Bounds(Decimal(0), Decimal(1_000_000), low_open=True),
    Quantity.MEMORY_BANDWIDTH_TBS: Bounds(Decimal(0), Decimal(1000), low_open=True),
    Quantity.INTERCONNECT_GBS: Bounds(Decimal(0), Decimal(1_000_000), low_open=True),
    Quantity.NVLINK_DOMAIN: Bounds(Decimal(1), Decimal(1024)),
}

OFFER_SHAPE: dict[str, Quantity] = {
    "gpu_count": Quantity.GPU_COUNT,
    "gpu_memory_gb": Quantity.GPU_MEMORY_GB,
    "vcpus": Quantity.VCPUS,
    "memory_gb": Quantity.MEMORY_GB,
    "network_gbps": Quantity.NETWORK_GBPS,
}
"""A catalog row's spec columns and what each measures (empty optional cells skipped)."""
GPU_SPEC: dict[str, Quantity] = {
    "memory_gb": Quantity.GPU_MEMORY_GB,
    "memory_bandwidth_tbs": Quantity.MEMORY_BANDWIDTH_TBS,
    **{
        f"{p}_tflops": Quantity.TFLOPS
        for p in ("fp32", "tf32", "bf16", "fp16", "fp8", "fp4", "bf16_matmul")
    },
    "interconnect_gbs": Quantity.INTERCONNECT_GBS,
    "nvlink_domain": Quantity.NVLINK_DOMAIN,
}
"""A GPU table entry's numbers and what each measures (None: the GPU has no such path)."""


def value_problem(quantity: Quantity, value: object) -> str | None:
    """Why ``value`` is not a plausible ``quantity``; None when it is."""
    if isinstance(value, bool):
        return f"{quantity.value} {value!r} is not a number"
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return f"{quantity.value} {str(value)[:20]!r} is not a number"
    shown = _shown(number)
    b = BOUNDS[quantity]
    low = f"above {b.unit}{b.low}" if b.low_open else f"at least {b.unit}{b.low}"
    expected = f"must be {low} and at most {b.unit}{b.high}"
    if not number.is_finite():
        return f"{quantity.value} {shown} is not a finite number ({expected})"
    below = number <= b.low if b.low_open else number < b.low
    if below or number > b.high:
        return f"{quantity.value} {shown} is implausible ({expected})"
    return None


def offer_problem(
    shape: Mapping[str, object], prices: Mapping[str, Decimal | None]
) -> tuple[str, str] | None:
    """The first implausible value of a catalog row as (column, why); None when all pass.

    ``shape``: the spec columns of :data:`OFFER_SHAPE` (None for an empty optional cell);
    ``prices``: each price column's hourly figure for the whole instance, checked per GPU.
    """
    for column, quantity in OFFER_SHAPE.items():
        value = shape.get(column)
        why = None if value is None else value_problem(quantity, value)
        if why is not None:
            return column, why
    count = shape["gpu_count"]
    for column, hourly in prices.items():
        if hourly is not None:
            why = price_per_gpu_problem(hourly, float(str(count)))
            if why is not None:
                return column, why
    return None


def gpu_spec_problem(values: Mapping[str, object]) -> tuple[str, str] | None:
    """The first implausible number of a GPU table entry as (key, why); None when all pass."""
    for key, quantity in GPU_SPEC.items():
        value = values.get(key)
        why = None if value is None else value_problem(quantity, value)
        if why is not None:
            return key, why
    return None


def price_per_gpu_problem(hourly: Decimal, gpu_count: float) -> str | None:
    """Why an instance's hourly price is implausible for its GPUs; None when it is fine."""
    count = value_problem(Quantity.GPU_COUNT, gpu_count)
    if count is not None:
        return count
    if not hourly.is_finite():
        return value_problem(Quantity.GPU_HOUR_USD, hourly)
    per_gpu = hourly / Decimal(str(gpu_count))
    why = value_problem(Quantity.GPU_HOUR_USD, per_gpu)
    if why is None:
        return None
    return f"price {_shown(hourly)} for {gpu_count:g} GPU(s): {why}"


def _shown(number: Decimal) -> str:
    """Short text for a message (``1E-300``, ``1.2E+20``, ``0.5``)."""
    if number.is_finite() and (number.adjusted() > 9 or (number and number.adjusted() < -6)):
        return f"{number:.3E}"
    return str(number.normalize()) if number.is_finite() else str(number)
