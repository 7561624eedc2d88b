"""Prices a placement under each pricing model: on-demand, spot, reserved, custom.

Money stays ``Decimal``. Spot adds expected interruption time; reserved charges the
whole term unless the commitment is reused (see :mod:`gpuplan.core.planner.reserved`).
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from gpuplan.core.catalog.kinds import PricingModel, ReservationRules
from gpuplan.core.planner.calibration import Band, band
from gpuplan.core.planner.plan import Option, PlanRequest
from gpuplan.core.planner.reserved import hours_cost, reserved_cost, term_cost
from gpuplan.core.planner.spot import spot_overhead

if TYPE_CHECKING:
    from gpuplan.core.catalog.offers import Offer

CUSTOM = "custom"
"""Pricing label for ``--price-per-gpu-hour``."""
_MODELS = tuple((m, m.value, m.term_hours, m.rules) for m in PricingModel)
"""Each model with what the loop asks of it, read once (enum properties are slow)."""


def price_option(
    base: Option, offer: Offer | None, request: PlanRequest, hours: float
) -> list[Option]:
    """``base`` (a placement with its compute) under every wanted pricing model."""
    notes = base.compute.notes + base.compute.suggestions if base.compute else ()
    factors = band(base.gpus)
    low, high = hours * factors[0], hours * factors[1]
    if offer is None:
        return _custom(replace(base, hours_low=low, hours_high=high), request, hours, notes)
    out: list[Option] = []
    nodes = Decimal(base.nodes)
    common = {f: getattr(base, f) for f in _PLACEMENT_FIELDS}
    common["hours_low"], common["hours_high"] = low, high
    for model, value, term_hours, rules in _MODELS:
        if request.pricing and model not in request.pricing:
            continue
        price = getattr(offer, f"{value}_hourly")
        if price is None:
            continue
        hourly = price * nodes
        if model is PricingModel.SPOT:
            extra = _spot(base.nodes, offer, request, hours, hourly, factors)
        elif term_hours is not None:
            extra = _reserved(model, offer, request, hours, hourly, base.nodes, factors)
        elif rules is not None:  # sold in blocks (capacity blocks, DWS): see core.offers
            extra = _blocks(value, rules, hours, hourly, factors)
        else:
            extra = _by_the_hour(hours, hourly, factors)
        extra["notes"] = (*notes, *extra["notes"])
        out.append(Option(**{**common, "pricing": value, "hourly_usd": hourly, **extra}))
    return out


def _custom(
    base: Option, request: PlanRequest, hours: float, notes: tuple[str, ...]
) -> list[Option]:
    """No catalog offer: priced at ``--price-per-gpu-hour``, or unpriced with a note."""
    rate = request.price_per_gpu_hour
    if rate is None:
        note = f"{base.gpu}: no catalog sells it; give --price-per-gpu-hour"
        return [replace(base, hours=hours, notes=(*notes, note))]
    hourly = rate * Decimal(str(base.gpus))
    factors = band(base.gpus)
    note = f"custom rate ${rate}/GPU-h (--price-per-gpu-hour)"
    return [
        replace(
            base,
            pricing=CUSTOM,
            hours=hours,
            hourly_usd=hourly,
            cost_usd=hours_cost(hourly, hours),
            cost_usd_low=hours_cost(hourly, hours * factors[0]),
            cost_usd_high=hours_cost(hourly, hours * factors[1]),
            notes=(*notes, note),
        )
    ]


def _by_the_hour(hours: float, hourly: Decimal, factors: Band) -> dict[str, Any]:
    return {
        "hours": hours,
        "cost_usd": hours_cost(hourly, hours),
        "cost_usd_low": hours_cost(hourly, hours * factors[0]),
        "cost_usd_high": hours_cost(hourly, hours * factors[1]),
        "notes": (),
    }


def _blocks(
    value: str, rules: ReservationRules, hours: float, hourly: Decimal, factors: Band
) -> dict[str, Any]:
    billed = rules.billed_hours(hours)
    return {
        "hours": hours,
        "cost_usd": hours_cost(hourly, billed),
        "cost_usd_low": hours_cost(hourly, rules.billed_hours(hours * factors[0])),
        "cost_usd_high": hours_cost(hourly, rules.billed_hours(hours * factors[1])),
        "notes": (f"{value}: {billed:,} h billed ({rules.summary})",),
    }


_PLACEMENT_FIELDS = (
    "gpu", "gpus", "nodes", "gpus_per_node", "provider", "instance_type", "region", "compute",
    "rule_of_thumb_factor",
)  # fmt: skip


def _spot(
    nodes: int, offer: Offer, request: PlanRequest, hours: float, hourly: Decimal, factors: Band
) -> dict[str, Any]:
    spot = spot_overhead(offer.provider, offer.gpu, nodes, request.checkpoint_hours)
    wall = hours * spot.factor
    low, high = wall * factors[0], wall * factors[1]
    note = (
        f"spot: +{spot.factor - 1:.1%} wall time: {spot.job_rate_per_hour:.3g} interruptions/h "
        f"({spot.rate_per_instance_hour:g}/instance-h assumed x {nodes} nodes) x "
        f"{spot.lost_hours_per_interruption:g} h lost each (half the "
        f"{request.checkpoint_hours:g} h checkpoint interval + restart)"
    )
    return {
        "hours": wall,
        "hours_low": low,
        "hours_high": high,
        "spot": spot,
        "cost_usd": hours_cost(hourly, wall),
        "cost_usd_low": hours_cost(hourly, low),
        "cost_usd_high": hours_cost(hourly, high),
        "notes": (note,),
    }


def _reserved(
    model: PricingModel,
    offer: Offer,
    request: PlanRequest,
    hours: float,
    hourly: Decimal,
    nodes: int,
    factors: Band,
) -> dict[str, Any]:
    term_hours = model.term_hours or 0
    od = offer.on_demand_hourly
    rc = reserved_cost(
        hourly,
        hours,
        term_hours,
        on_demand_hourly=None if od is None else od * Decimal(nodes),
        reuse=request.reuse_commitment,
    )
    reuse = request.reuse_commitment
    term = f"{term_hours // (365 * 24)}-year"
    if rc.whole_term:
        note = (
            f"{model.value}: the whole {term} term is charged (${rc.commitment:,.0f} "
            f"commitment) for a {hours / 24:,.1f}-day job; --reuse-commitment if the "
            "capacity stays busy afterwards"
        )
    else:
        note = f"{model.value}: job hours at the reserved rate (--reuse-commitment)"
    if rc.break_even_utilization is not None:
        note += (
            f"; pays off against on-demand when busy >= {rc.break_even_utilization:.0%} of the term"
        )

    return {
        "hours": hours,
        "cost_usd": rc.cost,
        "cost_usd_low": term_cost(hourly, hours * factors[0], term_hours, reuse=reuse),
        "cost_usd_high": term_cost(hourly, hours * factors[1], term_hours, reuse=reuse),
        "commitment_usd": rc.commitment,
        "break_even_utilization": rc.break_even_utilization,
        "notes": (note,),
    }
