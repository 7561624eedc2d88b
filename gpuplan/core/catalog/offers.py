"""Priced GPU instance offers: the catalog's rows as typed values.

An :class:`Offer` is one instance type in one region of one provider, with its GPUs
and its hourly USD price under each pricing model the provider sells there. Money is
``Decimal`` so that sums people compare to invoices carry no float drift.

The types are plain frozen dataclasses (no pydantic), so that the fast catalog reader of
``gpuplan estimate`` (:mod:`gpuplan.loaders.fast_catalog`) builds the very same rows; the
validated reader (:mod:`gpuplan.loaders.catalog_files`) checks them with a pydantic
``TypeAdapter`` over these definitions (``__pydantic_config__`` forbids unknown fields).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import ClassVar

from gpuplan.core.catalog.kinds import (
    BASE_MODELS,
    RESERVATION_RULES,
    PricingModel,
    Provider,
    ReservationRules,
    whole_count,
)

__all__ = [
    "BASE_MODELS",
    "RESERVATION_RULES",
    "Offer",
    "PriceParts",
    "PricingModel",
    "Provider",
    "ReservationRules",
]


_FORBID_EXTRA = {"extra": "forbid"}
"""pydantic's config for the validated reader (a plain dict: no pydantic import here)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PriceParts:
    """A configuration price built from separately billed parts (GCP: host VM + GPUs)."""

    __pydantic_config__: ClassVar[dict[str, str]] = _FORBID_EXTRA

    host: Decimal
    accelerators: Decimal


@dataclass(frozen=True, slots=True, kw_only=True)
class Offer:
    """One GPU instance type in one region, with hourly USD prices per pricing model."""

    __pydantic_config__: ClassVar[dict[str, str]] = _FORBID_EXTRA

    provider: Provider
    instance_type: str
    region: str
    gpu: str
    """Canonical GPU name (see :mod:`gpuplan.core.catalog.gpus`)."""
    gpu_count: float
    """GPUs per instance: a whole number is kept an ``int`` (``8``, never ``8.0``, in JSON
    and the API); below 1 for fractional sizes (1/6 = 0.1667)."""
    gpu_memory_gb: float
    """Memory per GPU, or the slice a fractional size gets."""
    vcpus: int
    memory_gb: float
    """Host RAM, GB."""
    interconnect: str = ""
    """GPU-to-GPU link inside the instance."""
    network_gbps: float | None = None
    """Instance network bandwidth (EFA / InfiniBand / RDMA where present), Gbit/s."""
    on_demand_hourly: Decimal | None = None
    spot_hourly: Decimal | None = None
    spot_zone: str | None = None
    """Zone of the lowest spot price in the region, when known."""
    reserved_1y_hourly: Decimal | None = None
    reserved_3y_hourly: Decimal | None = None
    capacity_block_hourly: Decimal | None = None
    """Effective hourly rate of a Capacity Block (AWS), per instance."""
    flex_start_hourly: Decimal | None = None
    dws_calendar_hourly: Decimal | None = None
    parts: dict[PricingModel, PriceParts] | None = None
    """Host and accelerator parts of each price, where the provider bills them apart."""
    as_of: date
    """The day the on-demand price (else the row's only price) was read from its source."""
    dates: dict[PricingModel, date] | None = None
    """The day each price that was read on another day than ``as_of`` was read (a Capacity
    Block rate from an older page beside today's spot price)."""
    source: str
    origin: str = ""
    """Where this row was read from: "bundled", or the path of a user catalog file."""

    def __post_init__(self) -> None:
        # As the validated reader gives them: a whole GPU count an int, sizes floats
        # (``80``, from a cloud API or a test, is written and shown as ``80.0``).
        set_field = object.__setattr__
        set_field(self, "gpu_count", whole_count(self.gpu_count))
        set_field(self, "gpu_memory_gb", float(self.gpu_memory_gb))
        set_field(self, "memory_gb", float(self.memory_gb))
        if self.network_gbps is not None:
            set_field(self, "network_gbps", float(self.network_gbps))

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.provider.value, self.instance_type, self.region)

    def price(self, pricing: PricingModel) -> Decimal | None:
        """Hourly USD price under ``pricing``, or None when not sold that way here."""
        value: Decimal | None = getattr(self, f"{pricing.value}_hourly")
        return value

    def price_as_of(self, pricing: PricingModel) -> date:
        """The day the price under ``pricing`` was read (the row's ``as_of`` unless the
        row dates that price apart)."""
        return (self.dates or {}).get(pricing, self.as_of)

    def price_per_gpu_hour(self, pricing: PricingModel) -> Decimal | None:
        hourly = self.price(pricing)
        if hourly is None or self.gpu_count <= 0:
            return None
        return hourly / Decimal(str(self.gpu_count))
