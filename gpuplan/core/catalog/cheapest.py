"""Cheapest price per GPU-hour for each GPU (and cloud): what ``gpuplan gpus --prices`` shows.

One line per GPU answers "what does an H100 cost, and where is it cheapest": the lowest
on-demand and the lowest spot price per GPU-hour across the offers given, with the offer
that has it. Pure: offers in, rows out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from gpuplan.core.catalog.offers import Offer, PricingModel, Provider
from gpuplan.core.catalog.query import is_stale

SHOWN = (PricingModel.ON_DEMAND, PricingModel.SPOT)


@dataclass(frozen=True)
class Cheapest:
    """The lowest price per GPU-hour under one pricing model, and the offer behind it."""

    per_gpu_hour: Decimal
    offer: Offer
    stale: bool = False
    """The price was read over 90 days before the day asked (``today``)."""


@dataclass(frozen=True)
class GpuPrices:
    """One GPU (on one cloud, or across all): its cheapest price per pricing model."""

    gpu: str
    provider: Provider | None
    best: dict[PricingModel, Cheapest] = field(default_factory=dict)
    offers: int = 0


def cheapest_by_gpu(
    offers: Iterable[Offer],
    *,
    per_provider: bool = False,
    pricings: Sequence[PricingModel] = SHOWN,
    order: Sequence[str] = (),
    today: date | None = None,
    include_stale: bool = False,
) -> list[GpuPrices]:
    """Rows by GPU (in ``order``'s order, then by name), per cloud when ``per_provider``:
    a GPU's clouds ranked by their cheapest on-demand price per GPU-hour.

    A price over 90 days old at ``today`` is cheapest only where no fresh one is (with
    ``include_stale``: by price alone, losing a tie); ties go to the first offer in
    (provider, instance type, region) order.
    """
    groups: dict[tuple[str, Provider | None], list[Offer]] = {}
    for offer in sorted(offers, key=lambda o: o.key):
        key = (offer.gpu, offer.provider if per_provider else None)
        groups.setdefault(key, []).append(offer)
    rank = {name: i for i, name in enumerate(order)}
    rows = []
    for (gpu, provider), members in groups.items():
        best: dict[PricingModel, Cheapest] = {}
        for pricing in pricings:
            found = [
                Cheapest(p, o, today is not None and is_stale(o, today, pricing))
                for o in members
                if (p := o.price_per_gpu_hour(pricing)) is not None
            ]
            if found:
                best[pricing] = min(found, key=lambda c: _rank(c, include_stale))
        rows.append(GpuPrices(gpu, provider, best, len(members)))
    rows.sort(key=lambda r: (rank.get(r.gpu, len(rank)), r.gpu, *_row_rank(r, include_stale)))
    return rows


def _rank(best: Cheapest, include_stale: bool) -> tuple[int, Decimal] | tuple[Decimal, int]:
    stale = int(best.stale)
    return (best.per_gpu_hour, stale) if include_stale else (stale, best.per_gpu_hour)


def _row_rank(row: GpuPrices, include_stale: bool) -> tuple[object, ...]:
    """A GPU's clouds by cheapest on-demand (those without one last), then by name."""
    best = row.best.get(PricingModel.ON_DEMAND)
    name = row.provider.value if row.provider else ""
    if best is None:
        return (1, 0, Decimal(0), name)
    stale, price = int(best.stale), best.per_gpu_hour
    return (0, price, stale, name) if include_stale else (0, stale, price, name)
