"""The catalog's enums and buying rules, free of pydantic.

``Precision``, ``Provider``, ``PricingModel`` and the block-sold models'
:class:`ReservationRules` live here so that the estimate path (which needs them, and no
validation models) imports no pydantic. :mod:`gpuplan.core.gpus` and
:mod:`gpuplan.core.offers` re-export them: import from either place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum


class Precision(StrEnum):
    """Numeric precision of the training math."""

    FP32 = "fp32"
    TF32 = "tf32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"


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
        return TERM_HOURS.get(self)


TERM_HOURS: dict[PricingModel, int] = {
    PricingModel.RESERVED_1Y: 365 * 24,
    PricingModel.RESERVED_3Y: 3 * 365 * 24,
}
"""Hours in each commitment term (365-day years)."""

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
