"""Price refresh, decided purely: quotes in, checked offers and a diff out.

The provider edges fetch raw hourly quotes (:class:`Quote`) from the clouds' price APIs;
this module turns them into :class:`~gpuplan.core.catalog.offers.Offer` values on the shapes the
catalog already knows (GPU, count, vCPUs, memory come from the current catalog: price
APIs do not say which GPU an instance carries), and applies the gates a refresh must pass
before anything is written:

- a quote in a currency other than USD, a known placeholder price (700.0 ...), or a
  price outside $0.01-$1,000 per GPU-hour (:mod:`gpuplan.core.catalog.provider_values`, the one
  check of every provider number; ``1e-300``, 0, NaN, infinities, negatives) rejects
  its whole region: the previous data for that region is kept and the problem is
  reported as an error;
- spot at or above on-demand is flagged (a warning), not rejected;
- when more than 20 % of a provider's offers in the refreshed regions would vanish, the
  provider is refused unless forced.

No clock, files or network here: ``as_of`` is an argument.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal
from enum import StrEnum
from statistics import median
from typing import Any

from gpuplan.core.catalog.offers import BASE_MODELS, Offer, PriceParts, PricingModel, Provider
from gpuplan.core.catalog.provider_values import price_per_gpu_problem
from gpuplan.core.wording import plural

# Per GPU (the 72-GPU ceiling of a listing times this bounds a whole instance).
MAX_PLAUSIBLE_HOURLY = Decimal(1000)
PLACEHOLDER_PRICES = frozenset({Decimal(700), Decimal(999), Decimal(9999), Decimal(99999)})
MAX_VANISH_SHARE = Decimal("0.20")


class NotConfigured(Exception):
    """A price API that needs a credential the environment does not give (an API key):
    ``catalog refresh`` says so in one line and skips that provider; it is not a failure
    of the refresh, and the provider's catalog file is left as it is."""


@dataclass(frozen=True)
class Quote:
    """One hourly price for one instance type in one region under one pricing model."""

    instance_type: str
    region: str
    pricing: PricingModel
    hourly: Decimal
    currency: str = "USD"
    zone: str | None = None
    """For spot: the zone of this (lowest) price."""
    parts: PriceParts | None = None
    """Host and accelerator parts where the provider bills them apart (GCP)."""
    ref: str = ""
    """Where the figure came from (SKU, meter), for reports."""


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Problem:
    provider: Provider
    region: str | None
    severity: Severity
    message: str

    def __str__(self) -> str:
        where = self.provider.value + (f"/{self.region}" if self.region else "")
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class SpotSummary:
    """Latest spot prices across a region's zones: the lowest (with its zone) and the median."""

    minimum: Decimal
    zone: str
    median: Decimal


def summarise_spot(latest_by_zone: Mapping[str, Decimal]) -> SpotSummary | None:
    if not latest_by_zone:
        return None
    zone, low = min(latest_by_zone.items(), key=lambda item: (item[1], item[0]))
    mid = Decimal(median(sorted(latest_by_zone.values())))
    return SpotSummary(minimum=low, zone=zone, median=mid)


def price_problem(hourly: Decimal, currency: str, gpu_count: float) -> str | None:
    """Why this price (of an instance with ``gpu_count`` GPUs) must not be written, or
    None when it is plausible."""
    return unit_price_problem(hourly, currency) or price_per_gpu_problem(hourly, gpu_count)


def unit_price_problem(price: Decimal, currency: str) -> str | None:
    """Why a unit price (per instance, vCPU or GB-hour) is unusable: not USD, not a
    positive finite number, a known placeholder, or above any GPU instance's."""
    if currency.upper() != "USD":
        return f"currency {currency!r} is not USD"
    if not price.is_finite() or price <= 0:
        return f"price {price} is not positive"
    if price in PLACEHOLDER_PRICES or price > MAX_PLAUSIBLE_HOURLY * 72:
        return f"price {price} looks like a placeholder"
    return None


def shapes_by_type(offers: Iterable[Offer]) -> dict[str, Offer]:
    """One template offer per instance type: the shape the refresh puts new prices on."""
    out: dict[str, Offer] = {}
    for offer in offers:
        out.setdefault(offer.instance_type, offer)
    return out


@dataclass
class RegionBuild:
    offers: list[Offer] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def build_offers(
    provider: Provider,
    shapes: Mapping[str, Offer],
    quotes: Iterable[Quote],
    *,
    as_of: date,
    source: str,
    reject_region: bool = True,
) -> tuple[dict[str, list[Offer]], list[Problem]]:
    """Offers per region from quotes; regions with a rejected price come back absent.

    With ``reject_region=False`` (imports of a third-party file) a bad price is dropped
    with a warning instead and the rest of its region is kept. Quotes for instance types
    with no known shape are skipped (counted in a warning).
    """
    by_region: dict[str, dict[str, list[Quote]]] = defaultdict(lambda: defaultdict(list))
    unknown: set[str] = set()
    for quote in quotes:
        if quote.instance_type not in shapes:
            unknown.add(quote.instance_type)
            continue
        by_region[quote.region][quote.instance_type].append(quote)
    problems: list[Problem] = []
    if unknown:
        shown = ", ".join(sorted(unknown)[:5]) + (" ..." if len(unknown) > 5 else "")
        problems.append(
            Problem(
                provider,
                None,
                Severity.WARNING,
                f"{plural(len(unknown), 'instance type')} not in the catalog, skipped: {shown}",
            )
        )
    result: dict[str, list[Offer]] = {}
    for region in sorted(by_region):
        built = _build_region(
            provider, shapes, region, by_region[region], (as_of, source), reject_region
        )
        problems.extend(built.problems)
        if not any(p.severity is Severity.ERROR for p in built.problems):
            result[region] = built.offers
    return result, problems


def _build_region(
    provider: Provider,
    shapes: Mapping[str, Offer],
    region: str,
    per_type: Mapping[str, list[Quote]],
    stamp: tuple[date, str],
    reject_region: bool,
) -> RegionBuild:
    built = RegionBuild()
    severity, outcome = (
        (Severity.ERROR, "region not updated") if reject_region else (Severity.WARNING, "dropped")
    )
    for instance_type in sorted(per_type):
        update, rejected = _price_update(per_type[instance_type], shapes[instance_type].gpu_count)
        for quote, why in rejected:
            ref = f" ({quote.ref})" if quote.ref else ""
            text = f"{instance_type} {quote.pricing.value}: {why}{ref}; {outcome}"
            built.problems.append(Problem(provider, region, severity, text))
        if all(update[f"{m.value}_hourly"] is None for m in PricingModel):
            continue
        update.update(region=region, as_of=stamp[0], source=stamp[1], origin="")
        offer = replace(shapes[instance_type], **update)
        built.offers.append(offer)
        od, spot = offer.on_demand_hourly, offer.spot_hourly
        if od is not None and spot is not None and spot >= od:
            text = f"{instance_type}: spot {spot} >= on-demand {od}; kept, check capacity"
            built.problems.append(Problem(provider, region, Severity.WARNING, text))
    return built


def _price_update(
    quotes: Iterable[Quote], gpu_count: float
) -> tuple[dict[str, Any], list[tuple[Quote, str]]]:
    """Offer fields set from plausible quotes, and the quotes rejected with the reason."""
    update: dict[str, Any] = {f"{m.value}_hourly": None for m in PricingModel}
    update["spot_zone"] = None
    parts: dict[PricingModel, PriceParts] = {}
    rejected: list[tuple[Quote, str]] = []
    for quote in quotes:
        why = price_problem(quote.hourly, quote.currency, gpu_count)
        if why:
            rejected.append((quote, why))
            continue
        update[f"{quote.pricing.value}_hourly"] = quote.hourly
        if quote.pricing is PricingModel.SPOT:
            update["spot_zone"] = quote.zone
        if quote.parts is not None:
            parts[quote.pricing] = quote.parts
    update["parts"] = parts or None
    update["dates"] = None  # every price of a rebuilt offer is read today
    return update, rejected


@dataclass(frozen=True)
class PriceMove:
    key: tuple[str, str, str]
    pricing: PricingModel
    old: Decimal | None
    new: Decimal | None

    @property
    def change(self) -> Decimal | None:
        """Relative change (0.10 = +10 %), None when a price appeared or disappeared."""
        if self.old is None or self.new is None or self.old == 0:
            return None
        return (self.new - self.old) / self.old


@dataclass(frozen=True)
class OfferDiff:
    added: tuple[Offer, ...] = ()
    removed: tuple[Offer, ...] = ()
    changed: tuple[PriceMove, ...] = ()
    unchanged: int = 0

    def largest_moves(self, n: int = 5) -> list[PriceMove]:
        """Price changes ordered by size of the relative move, largest first."""
        moved = [m for m in self.changed if m.change is not None]
        moved.sort(key=lambda m: (-abs(m.change or Decimal(0)), m.key, m.pricing.value))
        return moved[:n]

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def diff_offers(old: Iterable[Offer], new: Iterable[Offer]) -> OfferDiff:
    """What a refresh changes: offers added, removed, and each price that moved."""
    before = {o.key: o for o in old}
    after = {o.key: o for o in new}
    added = tuple(after[k] for k in sorted(after.keys() - before.keys()))
    removed = tuple(before[k] for k in sorted(before.keys() - after.keys()))
    changed: list[PriceMove] = []
    unchanged = 0
    for key in sorted(before.keys() & after.keys()):
        moves = [
            PriceMove(key, m, before[key].price(m), after[key].price(m))
            for m in PricingModel
            if before[key].price(m) != after[key].price(m)
        ]
        changed.extend(moves)
        unchanged += not moves
    return OfferDiff(added=added, removed=removed, changed=tuple(changed), unchanged=unchanged)


def vanish_problem(
    provider: Provider, old: Sequence[Offer], new: Sequence[Offer], *, force: bool
) -> Problem | None:
    """Refuse (error) when more than 20 % of the old offers would vanish, unless forced."""
    if not old:
        return None
    gone = len({o.key for o in old} - {o.key for o in new})
    share = Decimal(gone) / Decimal(len(old))
    if share <= MAX_VANISH_SHARE:
        return None
    text = f"{gone} of {len(old)} offers ({share:.0%}) would vanish"
    if force:
        return Problem(provider, None, Severity.WARNING, text + "; replaced anyway (--force)")
    return Problem(
        provider, None, Severity.ERROR, text + "; previous data kept (use --force to replace)"
    )


def carry_unread(
    old: Iterable[Offer], fresh: Mapping[str, Sequence[Offer]], read: frozenset[PricingModel]
) -> dict[str, list[Offer]]:
    """Keep prices under models the price API does not read (capacity blocks, DWS).

    A refreshed offer gets the old offer's unread prices, with a note in its source; an old
    offer that the refresh did not rebuild is kept as it was (its own ``as_of``) when it has
    such prices, so a family sold only in blocks does not vanish on every refresh.
    """
    out = {region: list(offers) for region, offers in fresh.items()}
    for offer in old:
        if offer.region not in out:
            continue
        unread = {m: offer.price(m) for m in PricingModel if m not in read and offer.price(m)}
        if not unread:
            continue
        offers = out[offer.region]
        index = next((i for i, o in enumerate(offers) if o.key == offer.key), None)
        if index is None:
            offers.append(offer)
            continue
        names = ", ".join(m.value for m in unread)
        source = f"{offers[index].source}; {names} carried from as_of {offer.as_of.isoformat()}"
        dates = {**(offers[index].dates or {}), **{m: offer.price_as_of(m) for m in unread}}
        update: dict[str, Any] = {f"{m.value}_hourly": v for m, v in unread.items()} | {
            "source": source,
            "dates": dates,
        }
        offers[index] = replace(offers[index], **update)
    return out


def merge_regions(old: Iterable[Offer], fresh: Mapping[str, Sequence[Offer]]) -> list[Offer]:
    """Old offers outside the refreshed regions, plus everything refreshed."""
    kept = [o for o in old if o.region not in fresh]
    for region in sorted(fresh):
        kept.extend(fresh[region])
    kept.sort(key=lambda o: (o.instance_type, o.region))
    return kept


@dataclass
class FetchResult:
    """What one provider's price API gave: quotes, the regions fully read, and failures."""

    provider: Provider
    quotes: list[Quote] = field(default_factory=list)
    regions: set[str] = field(default_factory=set)
    """Regions whose prices were read completely; only these are replaced."""
    failures: dict[str, str] = field(default_factory=dict)
    """Region (or "" for the whole provider) -> why it could not be read."""
    notes: list[str] = field(default_factory=list)
    """Informative lines for the report (e.g. spot medians)."""
    models: frozenset[PricingModel] = BASE_MODELS
    """The pricing models this API reads; the others are carried forward."""
