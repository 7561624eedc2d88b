"""``gpuplan catalog``: list priced GPU offers with filters, as a table, JSON or CSV."""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING

from gpuplan.cli import catalog_refresh_cmd
from gpuplan.cli.catalog_freshness import (
    STALE_MARK,
    add_include_stale,
    age_mark,
    freshness_footer,
)
from gpuplan.cli.common import (
    add_catalog_dir,
    add_output_format,
    check_provider_regions,
    load_catalog_for,
    parse_money,
    split_list,
)
from gpuplan.cli.render import (
    format_cell,
    format_count,
    print_csv,
    print_json,
    render_table,
    shown_columns,
    wrap,
)
from gpuplan.core.catalog.kinds import PricingModel, Provider
from gpuplan.core.clouds import facts_of, registered

if TYPE_CHECKING:
    # Type names only: the models (and pydantic) load in the handler, not at start-up.
    from gpuplan.core.catalog.offers import Offer
    from gpuplan.core.catalog.query import Catalog

CSV_COLUMNS = (
    "provider",
    "instance_type",
    "region",
    "gpu",
    "gpu_count",
    "gpu_memory_gb",
    "vcpus",
    "memory_gb",
    "on_demand_hourly",
    "spot_hourly",
    "spot_zone",
    "reserved_1y_hourly",
    "reserved_3y_hourly",
    "as_of",
    "source",
    "spot_outlier",
)


def _priced() -> list[Provider]:
    """Every registered cloud with a catalog file, in the registry's order."""
    return [p for p in registered() if facts_of(p).catalog_file]


def _clouds_in_words() -> str:
    """``AWS, GCP, Azure and the GPU clouds (Lambda, ...)``: the managed clouds by name,
    then the catalog-only ones."""
    managed = [facts_of(p).shown for p in _priced() if not facts_of(p).catalog_only]
    gpu_clouds = [facts_of(p).shown for p in _priced() if facts_of(p).catalog_only]
    if not gpu_clouds:
        return ", ".join(managed)
    return f"{', '.join(managed)} and the GPU clouds ({', '.join(gpu_clouds)})"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "catalog",
        help="list GPU instance offers and prices (bundled data, no credentials)",
        description=f"GPU instance offers on {_clouds_in_words()} with hourly USD prices. "
        "Without an ACTION it lists offers; 'refresh' fetches current prices from the "
        "providers' APIs and 'import' reads a SkyPilot catalog, both into the user catalog "
        "directory that overlays the bundled one.",
    )
    p.add_argument(
        "--provider",
        action="append",
        help=f"{', '.join(p.value for p in _priced())} (repeatable, comma list)",
    )
    p.add_argument("--gpu", action="append", help="GPU name, e.g. H100, A100-80GB (repeatable)")
    p.add_argument("--gpus", type=gpu_count, metavar="N", help="exactly N GPUs per instance")
    p.add_argument("--min-gpus", type=gpu_count, metavar="N", help="at least N GPUs per instance")
    p.add_argument(
        "--region",
        action="append",
        help="region names or groups: us, europe, asia, canada, southamerica, oceania, "
        "middleeast, africa (repeatable, comma list; e.g. --region europe,us-east-1)",
    )
    p.add_argument(
        "--pricing",
        help=", ".join(m.value for m in PricingModel) + ": keep only offers sold that way, "
        "and sort and price $/GPU-h by it. Default: every offer, whatever it is sold as, "
        "with $/GPU-h and sorting at the on-demand price (offers without one last)",
    )
    p.add_argument(
        "--top", type=top_count, metavar="N", help="only the first N rows (after sorting)"
    )
    p.add_argument("--max-hourly", metavar="USD", help="at most this much per instance-hour")
    p.add_argument(
        "--max-age",
        metavar="AGE",
        help="only offers whose price is at most this old: a duration with its unit, "
        "e.g. 30d, 6w (a bare number is refused)",
    )
    p.add_argument(
        "--sort",
        choices=["price", "price-per-gpu", "tflops-per-dollar"],
        help="hourly price, price per GPU-hour, or dense bf16 TFLOP/s per dollar",
    )
    add_include_stale(p)
    p.add_argument(
        "--source",
        action="store_true",
        help="say where each offer's data came from (bundled or user file, as_of, source)",
    )
    add_output_format(p)
    add_catalog_dir(p)
    p.set_defaults(handler=run)
    catalog_refresh_cmd.register(p)


DROP_ORDER = (9, 7, 6, 10, 0, 4, 5)
"""Columns left out, in this order, to fit the terminal: TFLOP/s per dollar, the 3-year and
1-year prices, the price date, the provider (the instance name tells it), the on-demand
instance price (its per-GPU figure stays), the spot price. The column the rows are sorted
by is never left out (:func:`drop_order`)."""
_AS_OF = 10
_PER_GPU = 8
_SPOT = 5
_PRICE_COLUMN = {PricingModel.ON_DEMAND: 4, PricingModel.SPOT: _SPOT}
_PRICE_COLUMN |= {PricingModel.RESERVED_1Y: 6, PricingModel.RESERVED_3Y: 7}


def drop_order(sort: str | None, pricing: PricingModel) -> tuple[int, ...]:
    """:data:`DROP_ORDER` less the column ``--sort`` orders by (at ``pricing``)."""
    column = {"price": _PRICE_COLUMN.get(pricing), "price-per-gpu": 8, "tflops-per-dollar": 9}
    sorted_by = column.get(sort or "")
    return tuple(i for i in DROP_ORDER if i != sorted_by)


def run(args: argparse.Namespace) -> int:
    acted = catalog_refresh_cmd.dispatch(args)
    if acted is not None:
        return acted
    from gpuplan.core.planner.quantities import parse_duration
    from gpuplan.usecases.catalog.lookup import offer_record, parse_pricing

    pricing = parse_pricing(args.pricing) if args.pricing else None
    max_hourly: Decimal | None = (
        parse_money(args.max_hourly, "--max-hourly") if args.max_hourly else None
    )
    max_age = timedelta(hours=parse_duration(args.max_age, "--max-age")) if args.max_age else None
    today = date.today()
    catalog = load_catalog_for(args, fast=True)
    offers = _matching(args, catalog, _Limits(pricing, max_hourly, max_age), today)
    matched = len(offers)
    if args.top is not None:
        offers = offers[: args.top]
    records = [offer_record(o, catalog, today) for o in offers]
    flagged = spot_flags(catalog)
    for record, offer in zip(records, offers, strict=True):
        record["spot_outlier"] = flagged.get(_key(offer))
    if args.source:
        for record, offer in zip(records, offers, strict=True):
            record["origin"] = offer.origin
        if not (args.json or args.csv):
            print(catalog_refresh_cmd.render_sources(offers))
            return 0
    if args.json:
        print_json(records)
        return 0
    if args.csv:
        print_csv((*CSV_COLUMNS, "origin") if args.source else CSV_COLUMNS, records)
        return 0
    if not offers:
        print(wrap(_why_none(args, catalog)))
        return 0
    _print_table(offers, catalog, flagged, pricing, today, (matched, args.sort))
    return 0


def _why_none(args: argparse.Namespace, catalog: Catalog) -> str:
    """Why the listing is empty: a GPU nobody in the catalog sells, or the filters."""
    from gpuplan.usecases.catalog.lookup import find_offers

    asked = split_list(args.provider)
    searched = ", ".join(asked or sorted({o.provider.value for o in catalog.offers}))
    gpus = split_list(args.gpu)
    if gpus and not find_offers(catalog, providers=asked, gpus=gpus):
        named = ", ".join(gpus)
        return (
            f"No offers: the catalog has no offer for {named} (providers searched: "
            f"{searched}); 'gpuplan gpus' lists the GPUs with prices."
        )
    return (
        "No offers match these filters (--provider, --gpu, --gpus, --region, --pricing, "
        f"--max-hourly, --max-age); providers searched: {searched}."
    )


@dataclass(frozen=True)
class _Limits:
    """The parsed ``--pricing``, ``--max-hourly`` and ``--max-age``."""

    pricing: PricingModel | None
    max_hourly: Decimal | None
    max_age: timedelta | None


def _matching(
    args: argparse.Namespace, catalog: Catalog, limits: _Limits, today: date
) -> list[Offer]:
    """The offers the filters in ``args`` select, sorted, before ``--top``."""
    from gpuplan.core.catalog.regions import expand_regions
    from gpuplan.usecases.catalog.lookup import find_offers

    region_words = split_list(args.region)
    check_provider_regions(split_list(args.provider), region_words, catalog)
    regions = expand_regions(region_words, catalog_regions(catalog))
    offers = find_offers(
        catalog,
        providers=split_list(args.provider),
        gpus=split_list(args.gpu),
        gpus_per_instance=args.gpus,
        min_gpus=args.min_gpus,
        regions=regions,
        pricing=limits.pricing,
        max_hourly=limits.max_hourly,
        sort=args.sort,
        max_age=limits.max_age,
        today=today,
        include_stale=args.include_stale,
    )
    if region_words and not regions:
        return []  # a group without a region in the catalog: nothing, not everything
    return list(offers)


_HEADERS = (
    "provider",
    "instance",
    "region",
    "GPU",
    "on-demand $/h",
    "spot $/h",
    "1y $/h",
    "3y $/h",
    "$/GPU-h",
    "TF/s/$",
    "as of",
)


def _print_table(
    offers: Sequence[Offer],
    catalog: Catalog,
    flagged: Mapping[tuple[str, str, str], str],
    pricing: PricingModel | None,
    today: date,
    matched_sort: tuple[int, str | None],
) -> None:
    """The table; ``matched_sort``: how many offers matched before ``--top``, and
    ``--sort``."""
    from gpuplan.core.catalog.query import is_stale, tflops_per_dollar

    matched, sort = matched_sort
    shown = pricing or PricingModel.ON_DEMAND
    rows = []
    for o in offers:
        count = format_count(o.gpu_count)
        rows.append(
            [
                o.provider.value,
                o.instance_type,
                o.region,
                f"{count}x {o.gpu}" + _memory_note(o, catalog),
                format_cell(o.on_demand_hourly, money=True),
                format_cell(o.spot_hourly, money=True) + ("!" if _key(o) in flagged else ""),
                format_cell(o.reserved_1y_hourly, money=True),
                format_cell(o.reserved_3y_hourly, money=True),
                format_cell(o.price_per_gpu_hour(shown), money=True),
                format_cell(tflops_per_dollar(o, catalog.gpus, shown), digits=0),
                o.as_of.isoformat() + age_mark(o, today),
            ]
        )
    right = [False] * 4 + [True] * 6 + [False]
    drop = drop_order(sort, shown)
    kept = shown_columns(list(_HEADERS), rows, drop=drop)
    if _AS_OF not in kept:  # a stale row stays marked: on its $/GPU-h, never dropped
        for o, row in zip(offers, rows, strict=True):
            row[_PER_GPU] += STALE_MARK if is_stale(o, today) else ""
    print(render_table(list(_HEADERS), rows, align_right=right, drop=drop))
    note = (
        f" ($/GPU-h at {shown.value})"
        if pricing
        else " ($/GPU-h at on-demand; offers sold any way listed)"
    )
    footer = freshness_footer(offers, today, matched, marked=_AS_OF in kept)
    print("\n" + wrap(footer + note + "."))
    if _SPOT in kept and any(_key(o) in flagged for o in offers):
        print(wrap(SPOT_FLAG_LEGEND))


SPOT_FLAG_LEGEND = (
    "! = one zone's spot price under half the same instance's spot price in the other "
    "regions (their median): a dip or a small pool; estimate ranks it at that median."
)


def spot_flags(catalog: Catalog) -> dict[tuple[str, str, str], str]:
    """Why each flagged offer's spot price is not one to count on (spot_realism)."""
    from gpuplan.core.planner.spot_realism import spot_outliers

    return spot_outliers(catalog.offers)


def _key(offer: Offer) -> tuple[str, str, str]:
    return (offer.provider.value, offer.instance_type, offer.region)


def catalog_regions(catalog: Catalog) -> dict[Provider, set[str]]:
    """Each provider's regions in the catalog (what a region group expands to)."""
    out: dict[Provider, set[str]] = {}
    for offer in catalog.offers:
        out.setdefault(offer.provider, set()).add(offer.region)
    return out


def gpu_count(text: str) -> float:
    """``--gpus``/``--min-gpus``: a positive finite count (0.5 for fractional sizes)."""
    try:
        value = float(text) if text.isascii() else math.nan
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a GPU count such as 8, got {text!r}") from None
    if not math.isfinite(value) or value <= 0 or value > 100_000:
        raise argparse.ArgumentTypeError(
            f"expected a positive GPU count (at most 100,000) such as 8, got {text!r}"
        )
    return value


def top_count(text: str) -> int:
    """``--top``: a whole number of rows, at least 1."""
    try:
        if not text.isascii() or len(text) > 7:
            raise ValueError(text)
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a whole number such as 10, got {text!r}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {text!r}")
    return value


def _memory_note(offer: Offer, catalog: Catalog) -> str:
    """The GPU memory when the name does not say it, or a fractional slice's share."""
    spec = catalog.gpus.get(offer.gpu)
    if offer.gpu_memory_gb != spec.memory_gb or "GB" not in offer.gpu:
        return f" {offer.gpu_memory_gb:g}GB"
    return ""
