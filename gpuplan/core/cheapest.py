"""Cheapest price per GPU-hour for each GPU (and cloud): what ``gpuplan gpus --prices`` shows.

One line per GPU answers "what does an H100 cost, and where is it cheapest": the lowest
on-demand and the lowest spot price per GPU-hour across the offers given, with the offer
that has it. Pure: offers in, rows out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from gpuplan.core.offers import Offer, PricingModel, Provider

SHOWN = (PricingModel.ON_DEMAND, PricingModel.SPOT)


@dataclass(frozen=True)
class Cheapest:
    """The lowest price per GPU-hour under one pricing model, and the offer behind it."""

    per_gpu_hour: Decimal
    offer: Offer


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
) -> list[GpuPrices]:
    """Rows by GPU (in ``order``'s order, then by name), per cloud when ``per_provider``.

    Ties go to the first offer in (provider, instance type, region) order.
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
            priced = [(o.price_per_gpu_hour(pricing), o) for o in members]
            found = [(p, o) for p, o in priced if p is not None]
            if found:
                price, offer = min(found, key=lambda pair: pair[0])
                best[pricing] = Cheapest(price, offer)
        rows.append(GpuPrices(gpu, provider, best, len(members)))
    rows.sort(
        key=lambda r: (rank.get(r.gpu, len(rank)), r.gpu, r.provider.value if r.provider else "")
    )
    return rows
