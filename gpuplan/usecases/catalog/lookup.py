"""Catalog use cases: load, resolve user words (GPU names, providers, pricing), query."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING

from gpuplan.core.catalog.kinds import PricingModel, Provider
from gpuplan.core.catalog.query import Catalog, OfferQuery, SortKey, query_offers
from gpuplan.core.errors import InputError

if TYPE_CHECKING:
    from gpuplan.core.catalog.offers import Offer


def parse_provider(text: str) -> Provider:
    try:
        return Provider(text.strip().lower())
    except ValueError:
        choices = ", ".join(p.value for p in Provider)
        raise InputError(f"unknown provider {text!r}; expected one of {choices}") from None


def parse_pricing(text: str) -> PricingModel:
    key = text.strip().lower().replace("-", "_")
    aliases = {"ondemand": "on_demand", "od": "on_demand", "reserved": "reserved_1y"}
    key = aliases.get(key, key)
    try:
        return PricingModel(key)
    except ValueError:
        choices = ", ".join(p.value for p in PricingModel)
        raise InputError(f"unknown pricing model {text!r}; expected one of {choices}") from None


def find_offers(
    catalog: Catalog,
    *,
    providers: Iterable[str] = (),
    gpus: Iterable[str] = (),
    gpus_per_instance: float | None = None,
    min_gpus: float | None = None,
    regions: Iterable[str] = (),
    pricing: str | PricingModel | None = None,
    max_hourly: Decimal | float | None = None,
    sort: str | SortKey | None = None,
    max_age: timedelta | None = None,
    today: date | None = None,
    include_stale: bool = False,
) -> list[Offer]:
    """Offers matching user-level words; raises :class:`InputError` for unknown names."""
    model = pricing if isinstance(pricing, PricingModel) or pricing is None else None
    if isinstance(pricing, str):
        model = parse_pricing(pricing)
    sort_key: SortKey | None
    try:
        sort_key = SortKey(sort) if sort is not None else None
    except ValueError:
        choices = ", ".join(s.value for s in SortKey)
        raise InputError(f"unknown sort {sort!r}; expected one of {choices}") from None
    query = OfferQuery(
        providers=frozenset(parse_provider(p) for p in providers),
        gpus=frozenset(catalog.gpus.resolve_many(gpus)),
        gpus_per_instance=gpus_per_instance,
        min_gpus=min_gpus,
        regions=frozenset(r.strip() for r in regions if r.strip()),
        pricing=model,
        max_hourly=None if max_hourly is None else Decimal(str(max_hourly)),
        sort=sort_key,
        max_age=max_age,
        today=today,
        include_stale=include_stale,
    )
    return query_offers(catalog, query)


_AGE_UNITS = {"d": 1, "w": 7}


def parse_max_age(text: str) -> timedelta:
    """``30d``, ``6w`` or a bare number of days -> a timedelta; InputError otherwise."""
    raw = text.strip().lower()
    unit = raw[-1:] if raw[-1:] in _AGE_UNITS else "d"
    number = raw[:-1] if raw[-1:] in _AGE_UNITS else raw
    if not number.isdigit():
        raise InputError(f"--max-age: expected days like 30d or 6w, got {text!r}")
    return timedelta(days=int(number) * _AGE_UNITS[unit])


def offer_record(offer: Offer, catalog: Catalog, today: date | None = None) -> dict[str, object]:
    """The public JSON shape of an offer (prices as numbers, null where not sold); ``stale``
    when its on-demand (else only) price is over 90 days old at ``today`` (default: now),
    and ``price_dates`` for prices read on another day."""
    from gpuplan.core.catalog.query import is_stale, tflops_per_dollar

    record: dict[str, object] = {
        "provider": offer.provider.value,
        "instance_type": offer.instance_type,
        "region": offer.region,
        "gpu": offer.gpu,
        "gpu_count": offer.gpu_count,
        "gpu_memory_gb": offer.gpu_memory_gb,
        "vcpus": offer.vcpus,
        "memory_gb": offer.memory_gb,
        "interconnect": offer.interconnect,
        "network_gbps": offer.network_gbps,
    }
    for model in PricingModel:
        record[f"{model.value}_hourly"] = offer.price(model)
    record["spot_zone"] = offer.spot_zone
    od = offer.price_per_gpu_hour(PricingModel.ON_DEMAND)
    record["on_demand_per_gpu_hour"] = od
    record["bf16_tflops_per_dollar"] = tflops_per_dollar(
        offer, catalog.gpus, PricingModel.ON_DEMAND
    )
    if offer.parts:
        record["price_parts"] = {
            m.value: {"host": p.host, "accelerators": p.accelerators}
            for m, p in offer.parts.items()
        }
    record["as_of"] = offer.as_of
    when = today or date.today()
    record["age_days"] = (when - offer.as_of).days
    record["stale"] = is_stale(offer, when)
    if offer.dates:
        record["price_dates"] = {m.value: d for m, d in offer.dates.items()}
    record["source"] = offer.source
    return record
