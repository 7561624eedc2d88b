"""Spot realism: a spot price far below the same instance type elsewhere is suspect.

Catalogs record one availability zone's spot price per region. Now and then one zone's
price sits far below every other region's for the same instance (a p4d.24xlarge at
$2.47/h against $6-13 elsewhere): a short-lived dip, or a pool with little capacity.
Ranking a job on it is a plan that will not hold, so such prices are flagged
(``spot_outlier``), shown as they are, and *ranked* at the price one can count on:
:func:`dependable_spot_factors` gives the factor from the flagged price to the median of
the same instance's spot price in the other regions, which the ranking multiplies the
option's cost by. When option 1 still rests on one for a long job, the output says so and
names the best option without it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuplan.core.catalog.offers import Offer


if TYPE_CHECKING:
    from gpuplan.core.planner.options import Option

OUTLIER_RATIO = Decimal("0.5")
"""Flag a spot price under half the median of the same instance's other regions."""
MIN_OTHERS = 2
"""Compare only against at least two other regions' prices."""
LONG_JOB_HOURS = 7 * 24.0
"""A job longer than a week outlives any one zone's price dip."""

OutlierKey = tuple[str, str, str]
"""(provider, instance type, region)."""


def spot_outliers(offers: Iterable[Offer]) -> dict[OutlierKey, str]:
    """Reason per offer whose spot price is far below the same instance's other regions."""
    by_type: dict[tuple[str, str], list[tuple[str, Decimal, str | None]]] = {}
    for offer in offers:
        if offer.spot_hourly is not None and offer.spot_hourly > 0:
            key = (offer.provider.value, offer.instance_type)
            by_type.setdefault(key, []).append((offer.region, offer.spot_hourly, offer.spot_zone))
    out: dict[OutlierKey, str] = {}
    for (provider, instance), prices in by_type.items():
        for region, price, zone in prices:
            others = [p for r, p, _ in prices if r != region]
            if len(others) < MIN_OTHERS:
                continue
            typical = Decimal(_median(others))
            if price < OUTLIER_RATIO * typical:
                where = f"{region} ({zone})" if zone else region
                out[(provider, instance, region)] = (
                    f"spot ${price:,.2f}/h in {where} is under half the median "
                    f"${typical:,.2f}/h of {instance} spot in {len(others)} other regions "
                    f"(${min(others):,.2f}-${max(others):,.2f})"
                )
    return out


def dependable_spot_factors(offers: Iterable[Offer]) -> dict[OutlierKey, Decimal]:
    """For each flagged offer (:func:`spot_outliers`): the median of the same instance's
    spot price in the other regions over its own, the factor from its listed cost to the
    cost to count on (above 2 by the definition of an outlier)."""
    by_type: dict[tuple[str, str], list[tuple[str, Decimal]]] = {}
    for offer in offers:
        if offer.spot_hourly is not None and offer.spot_hourly > 0:
            key = (offer.provider.value, offer.instance_type)
            by_type.setdefault(key, []).append((offer.region, offer.spot_hourly))
    out: dict[OutlierKey, Decimal] = {}
    for (provider, instance), prices in by_type.items():
        for region, price in prices:
            others = [p for r, p in prices if r != region]
            if len(others) >= MIN_OTHERS:
                typical = Decimal(_median(others))
                if price < OUTLIER_RATIO * typical:
                    out[(provider, instance, region)] = typical / price
    return out


def _median(values: list[Decimal]) -> Decimal:
    """As ``statistics.median`` (mean of the middle two for an even count), without
    importing it (and ``random``, ``fractions``) on the estimate path."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def outlier_warning(options: Sequence[Option]) -> tuple[str | None, Option | None]:
    """When option 1 rests on a flagged spot price for a long job: what to say, and the
    best option without a flagged price."""
    if not options:
        return None, None
    first = options[0]
    if first.spot_outlier is None or (first.hours or 0.0) <= LONG_JOB_HOURS:
        return None, None
    best = next((o for o in options if o.spot_outlier is None), None)
    days = (first.hours or 0.0) / 24
    text = (
        f"option 1 rests on one zone's spot price for a {days:,.0f}-day job: {first.spot_outlier}"
    )
    if best is not None:
        where = f"{best.nodes} x {best.instance_type}" if best.instance_type else best.gpu
        cost = "unpriced" if best.cost_usd is None else f"${best.cost_usd:,.0f}"
        text += (
            f"; best without it: {best.gpu} x {best.gpus:g} ({where}, "
            f"{best.provider.value if best.provider else '-'} {best.region or ''} "
            f"{best.pricing or ''}) for {cost}"
        )
    return text, best
