"""Priced GPU instance offers: the catalog's rows as typed values.

An :class:`Offer` is one instance type in one region of one provider, with its GPUs
and its hourly USD price under each pricing model the provider sells there. Money is
``Decimal`` so that sums people compare to invoices carry no float drift.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Provider(StrEnum):
    AWS = "aws"
    GCP = "gcp"
    AZURE = "azure"


class PricingModel(StrEnum):
    ON_DEMAND = "on_demand"
    SPOT = "spot"
    RESERVED_1Y = "reserved_1y"
    RESERVED_3Y = "reserved_3y"
    CAPACITY_BLOCK = "capacity_block"
    """AWS EC2 Capacity Blocks for ML: a block of days bought ahead, paid up front."""
    FLEX_START = "flex_start"
    """GCP Dynamic Workload Scheduler Flex-start: queued until capacity frees, 7 days at most."""
    DWS_CALENDAR = "dws_calendar"
    """GCP Dynamic Workload Scheduler calendar mode: a reservation of whole days, booked ahead."""

    @property
    def rules(self) -> ReservationRules | None:
        """How this model is bought (block lengths, lead time), None for plain hourly use."""
        return RESERVATION_RULES.get(self)

    @property
    def term_hours(self) -> int | None:
        """Hours in the commitment term (365-day years), None when nothing is committed."""
        if self is PricingModel.RESERVED_1Y:
            return 365 * 24
        if self is PricingModel.RESERVED_3Y:
            return 3 * 365 * 24
        return None


BASE_MODELS = frozenset(
    {PricingModel.ON_DEMAND, PricingModel.SPOT, PricingModel.RESERVED_1Y, PricingModel.RESERVED_3Y}
)
"""The models every price API refresh reads; block-sold ones are curated in the bundle."""


@dataclass(frozen=True)
class ReservationRules:
    """The buying rules of a pricing model sold in blocks rather than by the hour.

    ``step_hours`` is what a block is rounded up to (a job of 30 h in 24-h steps buys
    48 h); ``min_hours``/``max_hours`` bound one block; ``lead_days`` is how far ahead it
    can (or must) be booked, ``None`` when it is not booked but queued.
    """

    min_hours: int
    max_hours: int
    step_hours: int
    lead_days: int | None
    paid_upfront: bool
    summary: str
    source: str

    def billed_hours(self, hours: float) -> int:
        """Hours paid for a job of ``hours``: whole steps, at least one minimum block.

        A job longer than ``max_hours`` needs several blocks; they are rounded the same way.
        """
        steps = max(math.ceil(hours / self.step_hours - 1e-9), 1)
        return max(steps * self.step_hours, self.min_hours)


RESERVATION_RULES: dict[PricingModel, ReservationRules] = {
    PricingModel.CAPACITY_BLOCK: ReservationRules(
        min_hours=24,
        max_hours=182 * 24,
        step_hours=24,
        lead_days=56,
        paid_upfront=True,
        summary="blocks of 1-14 days in 1-day steps (up to 182 days in 7-day steps), booked "
        "up to 8 weeks ahead, paid in full when reserved",
        source="AWS EC2 User Guide, Capacity Blocks for ML",
    ),
    PricingModel.FLEX_START: ReservationRules(
        min_hours=1,
        max_hours=7 * 24,
        step_hours=1,
        lead_days=None,
        paid_upfront=False,
        summary="queued until capacity is free, runs at most 7 days, billed for run time",
        source="Google Cloud docs, Dynamic Workload Scheduler Flex-start VMs",
    ),
    PricingModel.DWS_CALENDAR: ReservationRules(
        min_hours=24,
        max_hours=90 * 24,
        step_hours=24,
        lead_days=56,
        paid_upfront=False,
        summary="reservation of 1-90 whole days, booked up to 8 weeks ahead, charged for "
        "the whole reservation",
        source="Google Cloud docs, future reservations in calendar mode",
    ),
}


class PriceParts(BaseModel):
    """A configuration price built from separately billed parts (GCP: host VM + GPUs)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: Decimal
    accelerators: Decimal


class Offer(BaseModel):
    """One GPU instance type in one region, with hourly USD prices per pricing model."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: Provider
    instance_type: str
    region: str
    gpu: str
    """Canonical GPU name (see :mod:`gpuplan.core.gpus`)."""
    gpu_count: float
    """GPUs per instance; below 1 for fractional sizes (1/6 = 0.1667)."""
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
    source: str
    origin: str = ""
    """Where this row was read from: "bundled", or the path of a user catalog file."""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.provider.value, self.instance_type, self.region)

    def price(self, pricing: PricingModel) -> Decimal | None:
        """Hourly USD price under ``pricing``, or None when not sold that way here."""
        value: Decimal | None = getattr(self, f"{pricing.value}_hourly")
        return value

    def price_per_gpu_hour(self, pricing: PricingModel) -> Decimal | None:
        hourly = self.price(pricing)
        if hourly is None or self.gpu_count <= 0:
            return None
        return hourly / Decimal(str(self.gpu_count))
