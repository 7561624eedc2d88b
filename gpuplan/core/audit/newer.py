"""The same busy work on a newer GPU generation, where the planner can say it.

Work moves only for a job labelled restartable (it restarts elsewhere from a
checkpoint). Busy instance-hours shrink by the ratio of planner throughputs (dense bf16
peak x the planner's end-to-end MFU base of the architecture, x GPUs); waiting hours do
not (a starved GPU waits as long on a faster one). The candidate must be a later GPU
(launch year) that fits like any right-sizing offer (:func:`.rightsize.fits`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from gpuplan.core.audit.rightsize import Need, fits
from gpuplan.core.catalog.gpus import GpuTable, Precision
from gpuplan.core.catalog.offers import Offer, PricingModel
from gpuplan.core.planner.efficiency import base_mfu
from gpuplan.core.planner.timing import peak_for


@dataclass(frozen=True)
class Move:
    offer: Offer
    hourly_usd: Decimal
    hours_now: Decimal
    hours_then: Decimal
    cost_now: Decimal
    cost_then: Decimal
    speedup: float
    """Busy-work speed ratio, new over current."""


def _rate(gpus: GpuTable, name: str, count: float) -> float | None:
    spec = gpus.lookup(name)
    if spec is None:
        return None
    peak, _ = peak_for(spec, Precision.BF16)
    return peak * base_mfu(spec)[0] * count


def newer_generation(
    current: Offer, hourly_usd: Decimal, busy_hours: Decimal, running_hours: Decimal,
    need: Need, offers: Sequence[Offer], gpus: GpuTable,
) -> Move | None:  # fmt: skip
    """The cheapest move to a later GPU for the same work, or None."""
    now_spec = gpus.lookup(current.gpu)
    rate_now = _rate(gpus, current.gpu, current.gpu_count)
    if now_spec is None or rate_now is None or not busy_hours:
        return None
    best: Move | None = None
    for offer in offers:
        spec = gpus.lookup(offer.gpu)
        price = offer.price(PricingModel.ON_DEMAND)
        if (offer.provider, offer.region) != (current.provider, current.region) or price is None:
            continue
        if spec is None or spec.launch_year <= now_spec.launch_year or not fits(offer, need):
            continue
        rate = _rate(gpus, offer.gpu, offer.gpu_count)
        if rate is None:
            continue
        speedup = rate / rate_now
        hours = running_hours - busy_hours + busy_hours / Decimal(str(round(speedup, 4)))
        move = Move(offer, price, running_hours, hours, hourly_usd * running_hours,
                    price * hours, speedup)  # fmt: skip
        if move.cost_then < move.cost_now and (best is None or move.cost_then < best.cost_then):
            best = move
    return best
