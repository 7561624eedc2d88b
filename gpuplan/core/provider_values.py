"""One validation for every number a provider's API gives the catalog.

Price APIs and instance-type listings are input from outside: a price of ``1e-300``
would be written as ``$0.0000`` and ranked first, a listing with 10^20 GPUs would
reach the catalog. Each number is checked here, by what it measures, before it is
used: finite, and inside a plausible range for that quantity. Prices are checked per
GPU (an 8-GPU instance may cost eight times one GPU); fractional GPU counts (a sixth
of an A10) are kept. Pure: no SDK, no clock.
"""

from __future__ import annotations

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
}


def value_problem(quantity: Quantity, value: object) -> str | None:
    """Why ``value`` is not a plausible ``quantity``; None when it is."""
    if isinstance(value, bool):
        return f"{quantity.value} {value!r} is not a number"
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return f"{quantity.value} {str(value)[:20]!r} is not a number"
    shown = _shown(number)
    if not number.is_finite():
        return f"{quantity.value} {shown} is not a finite number"
    b = BOUNDS[quantity]
    below = number <= b.low if b.low_open else number < b.low
    if below or number > b.high:
        low = f"above {b.unit}{b.low}" if b.low_open else f"at least {b.unit}{b.low}"
        return (
            f"{quantity.value} {shown} is implausible (must be {low} and at most {b.unit}{b.high})"
        )
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
