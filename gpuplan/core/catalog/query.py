"""Catalog queries: pure functions over offers and the GPU table.

Filtering and sorting live here so the CLI, the TUI and the Python API answer the same
question the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING

from gpuplan.core.catalog.gpu_names import GpuTable
from gpuplan.core.catalog.kinds import Precision, PricingModel, Provider

if TYPE_CHECKING:
    from gpuplan.core.catalog.offers import Offer

STALE_AFTER = timedelta(days=90)
OLD_ROW_AFTER = timedelta(days=30)
"""A row whose price is older than this at the time asked is marked in the table."""


class SortKey(StrEnum):
    PRICE = "price"
    PRICE_PER_GPU = "price-per-gpu"
    TFLOPS_PER_DOLLAR = "tflops-per-dollar"


@dataclass(frozen=True)
class OfferQuery:
    """What to keep and how to order it. Empty collections mean 'any'."""

    providers: frozenset[Provider] = frozenset()
    gpus: frozenset[str] = frozenset()
    """Canonical GPU names."""
    gpus_per_instance: float | None = None
    min_gpus: float | None = None
    regions: frozenset[str] = frozenset()
    pricing: PricingModel | None = None
    """Keep only offers sold under this model; also the price that sorting uses."""
    max_hourly: Decimal | None = None
    sort: SortKey | None = None
    max_age: timedelta | None = None
    """Keep only offers whose price is at most this old at ``today``."""
    today: date | None = None
    """The date ``max_age`` and staleness are measured from (the clock is the caller's)."""
    include_stale: bool = False
    """Rank a price older than :data:`STALE_AFTER` by its price alone (it still loses a
    tie); by default every stale offer ranks after the fresh ones."""


@dataclass(frozen=True)
class Catalog:
    """All offers plus the GPU table they refer to."""

    offers: tuple[Offer, ...]
    gpus: GpuTable
    notices: tuple[str, ...] = field(default=())
    """Data-quality notices found on load (stale data, spot at or above on-demand)."""

    @property
    def as_of(self) -> date | None:
        """The oldest ``as_of`` of any offer: how current the catalog is at worst."""
        return min((o.as_of for o in self.offers), default=None)


def as_of_range(offers: Iterable[Offer]) -> tuple[date, date] | None:
    """(oldest, newest) ``as_of`` of these offers, None when there are none."""
    dates = [o.as_of for o in offers]
    return (min(dates), max(dates)) if dates else None


def is_old(offer: Offer, today: date, after: timedelta = OLD_ROW_AFTER) -> bool:
    """True when the offer's price was read more than ``after`` before ``today``."""
    return today - offer.as_of > after


def is_stale(offer: Offer, today: date, pricing: PricingModel = PricingModel.ON_DEMAND) -> bool:
    """True when the price under ``pricing`` was read more than :data:`STALE_AFTER` before
    ``today`` (the day that price was read, :meth:`Offer.price_as_of`)."""
    return today - offer.price_as_of(pricing) > STALE_AFTER


def oldest_price_note(used: Iterable[tuple[Offer, PricingModel]], today: date | None) -> str | None:
    """The assumption line naming the oldest price a result rests on: each offer under the
    pricing model it was used at, dated by the day that price was read."""
    oldest = min(used, key=lambda u: (u[0].price_as_of(u[1]), u[0].key), default=None)
    if oldest is None:
        return None
    offer, pricing = oldest
    read = offer.price_as_of(pricing)
    age = ""
    if today is not None:
        age = f", {(today - read).days} days old"
        if is_stale(offer, today, pricing):
            age += f" (stale: over {STALE_AFTER.days} days)"
    return (
        f"prices: the oldest used is {offer.instance_type} in {offer.region} "
        f"({offer.provider.value}) at {pricing.value}, as_of {read.isoformat()}{age}"
    )


def tflops_per_dollar(offer: Offer, gpus: GpuTable, pricing: PricingModel) -> float | None:
    """Dense bf16 TFLOP/s (fp16 where there is no bf16) bought per dollar-hour."""
    spec = gpus.get(offer.gpu)
    peak = spec.peak_tflops(Precision.BF16) or spec.peak_tflops(Precision.FP16)
    hourly = offer.price(pricing)
    if peak is None or hourly is None or hourly <= 0:
        return None
    return peak * offer.gpu_count / float(hourly)


def query_offers(catalog: Catalog, query: OfferQuery) -> list[Offer]:
    """Offers matching ``query``, ordered by its sort key (ties by provider, type, region)."""
    pricing = query.pricing or PricingModel.ON_DEMAND
    kept = [o for o in catalog.offers if _matches(o, query)]
    kept.sort(key=lambda o: (o.provider.value, o.instance_type, o.region))
    if query.sort is None:
        return kept

    def order(offer: Offer) -> tuple[int, int, float] | tuple[int, float, int]:
        missing, value = _sort_value(offer, catalog.gpus, query.sort, pricing)
        stale = int(query.today is not None and is_stale(offer, query.today, pricing))
        return (missing, value, stale) if query.include_stale else (missing, stale, value)

    return sorted(kept, key=order)


def _matches(offer: Offer, query: OfferQuery) -> bool:
    if query.providers and offer.provider not in query.providers:
        return False
    if query.gpus and offer.gpu not in query.gpus:
        return False
    if query.gpus_per_instance is not None and offer.gpu_count != query.gpus_per_instance:
        return False
    if query.min_gpus is not None and offer.gpu_count < query.min_gpus:
        return False
    if query.regions and offer.region not in query.regions:
        return False
    if query.pricing is not None and offer.price(query.pricing) is None:
        return False
    if (
        query.max_age is not None
        and query.today is not None
        and is_old(offer, query.today, query.max_age)
    ):
        return False
    if query.max_hourly is not None:
        hourly = offer.price(query.pricing or PricingModel.ON_DEMAND)
        if hourly is None or hourly > query.max_hourly:
            return False
    return True


def _sort_value(
    offer: Offer, gpus: GpuTable, key: SortKey | None, pricing: PricingModel
) -> tuple[int, float]:
    """Missing prices sort last; tflops-per-dollar sorts best (highest) first."""
    if key is SortKey.TFLOPS_PER_DOLLAR:
        value = tflops_per_dollar(offer, gpus, pricing)
        return (1, 0.0) if value is None else (0, -value)
    price = offer.price(pricing) if key is SortKey.PRICE else offer.price_per_gpu_hour(pricing)
    return (1, 0.0) if price is None else (0, float(price))


def stale_notice(offers: Sequence[Offer], now: datetime, source: str) -> str | None:
    """A notice when every offer of a file is older than 90 days at ``now`` (an argument).

    A file with only some old rows gets no notice on every command: each row's age shows
    in the catalog table's as-of column and the planner names the oldest price it used.
    """
    today = now.date()
    old = [o for o in offers if is_old(o, today, STALE_AFTER)]
    if not old or len(old) < len(offers):
        return None
    oldest = min(o.as_of for o in old)
    return (
        f"{source}: all offers have prices over {STALE_AFTER.days} days old (oldest "
        f"as_of {oldest.isoformat()}, {(today - oldest).days} days old); run "
        "'gpuplan catalog refresh' or check current list prices"
    )
