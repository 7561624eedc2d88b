"""``gpuplan gpus --prices``: the cheapest on-demand and spot price per GPU-hour of each
GPU across the clouds, and where, one line each (like ``sky show-gpus``); with
``--per-cloud``, a GPU's clouds (the big three and the GPU clouds) ranked by on-demand
price, each with the age of that price and how the cloud bills."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from datetime import date
from typing import TYPE_CHECKING

from gpuplan.cli.catalog_cmd import SPOT_FLAG_LEGEND, catalog_regions, spot_flags
from gpuplan.cli.catalog_freshness import as_of_text
from gpuplan.cli.common import load_catalog_for, split_list
from gpuplan.cli.render import format_cell, plural, print_csv, print_json, render_table, wrap
from gpuplan.core.catalog.cheapest import SHOWN, Cheapest, GpuPrices, cheapest_by_gpu
from gpuplan.core.catalog.kinds import PricingModel
from gpuplan.core.catalog.regions import expand_regions

if TYPE_CHECKING:
    from gpuplan.core.catalog.offers import Offer, Provider

CSV_COLUMNS = (
    "gpu",
    "provider",
    "offers",
    "on_demand_per_gpu_hour",
    "on_demand_where",
    "spot_per_gpu_hour",
    "spot_where",
    "spot_outlier",
    "on_demand_as_of",
    "on_demand_age_days",
    "on_demand_stale",
    "billing",
)


def where(best: Cheapest | None, with_provider: bool, flagged: Flags | None = None) -> str:
    if best is None:
        return "-"
    o = best.offer
    head = f"{o.provider.value} " if with_provider else ""
    mark = " (spot!)" if flagged and _key(o) in flagged else ""
    return f"{head}{o.region} {o.instance_type}{mark}"


Flags = Mapping[tuple[str, str, str], str]


def _key(offer: Offer) -> tuple[str, str, str]:
    return (offer.provider.value, offer.instance_type, offer.region)


def record(row: GpuPrices, today: date, flagged: Flags | None = None) -> dict[str, object]:
    out: dict[str, object] = {
        "gpu": row.gpu,
        "provider": row.provider.value if row.provider else None,
        "offers": row.offers,
    }
    for pricing in SHOWN:
        best = row.best.get(pricing)
        out[f"{pricing.value}_per_gpu_hour"] = best.per_gpu_hour if best else None
        out[f"{pricing.value}_where"] = where(best, True) if best else None
        read = best.offer.price_as_of(pricing) if best else None
        out[f"{pricing.value}_as_of"] = read
        out[f"{pricing.value}_age_days"] = (today - read).days if read else None
        out[f"{pricing.value}_stale"] = best.stale if best else None
    spot = row.best.get(PricingModel.SPOT)
    out["spot_outlier"] = (flagged or {}).get(_key(spot.offer)) if spot else None
    out["billing"] = billing(row.provider) if row.provider else None
    return out


def billing(provider: Provider) -> str:
    """How the cloud bills on-demand use, from its facts (empty where no source said)."""
    from gpuplan.core.clouds import facts_of

    return facts_of(provider).billing


def age(best: Cheapest | None, today: date) -> str:
    """The on-demand price's age in days, ``stale`` past 90."""
    if best is None:
        return "-"
    days = (today - best.offer.price_as_of(PricingModel.ON_DEMAND)).days
    return f"{days} d" + (" stale" if best.stale else "")


def run_prices(args: argparse.Namespace) -> int:
    from gpuplan.usecases.catalog.lookup import find_offers

    catalog = load_catalog_for(args)
    region_words = split_list(args.region)
    regions = expand_regions(region_words, catalog_regions(catalog))
    offers = find_offers(
        catalog,
        providers=split_list(args.provider),
        gpus=split_list(args.gpu),
        regions=regions,
    )
    if region_words and not regions:
        offers = []
    today = date.today()
    rows = cheapest_by_gpu(
        offers,
        per_provider=args.per_cloud,
        order=catalog.gpus.names,
        today=today,
        include_stale=args.include_stale,
    )
    flagged = spot_flags(catalog)
    records = [record(r, today, flagged) for r in rows]
    if args.json:
        print_json(records)
    elif args.csv:
        print_csv(CSV_COLUMNS, records)
    else:
        _print_table(rows, args.per_cloud, today, flagged, offers)
    return 0


def _print_table(
    rows: list[GpuPrices], per_cloud: bool, today: date, flagged: Flags, offers: list[Offer]
) -> None:
    headers = ["GPU", *(["cloud"] if per_cloud else []), "offers"]
    headers += ["on-demand $/GPU-h", "cheapest on-demand at", "spot $/GPU-h", "cheapest spot at"]
    headers += ["age", *(["billing"] if per_cloud else [])]
    table = [_cells(row, per_cloud, today, flagged) for row in rows]
    lead = 3 if per_cloud else 2
    right = [False] * (lead - 1) + [True, True, False, True, False, True]
    right += [False] if per_cloud else []
    # Left out first to fit the terminal: the offer count, the spot place, where on-demand
    # is cheapest, the billing note (it wraps before it goes), the age.
    drop = (lead - 1, lead + 3, lead + 1, *([lead + 5] if per_cloud else []), lead + 4)
    print(render_table(headers, table, align_right=right, drop=drop, wrap_last=True))
    ranked = " and cloud, clouds ranked by it" if per_cloud else ""
    print(
        "\n"
        + wrap(
            f"{plural(len(rows), 'line')}; USD per GPU-hour, the lowest list price in the "
            f"catalog for each GPU{ranked}; list prices as of {as_of_text(offers)}; age: days "
            "since the on-demand price was read, stale past 90 (a stale price is cheapest "
            "only where no fresh one is, unless --include-stale)."
        )
    )
    if any("(spot!)" in cell for cells in table for cell in cells):
        print(wrap(SPOT_FLAG_LEGEND.replace("! =", "spot! =", 1)))


def _cells(row: GpuPrices, per_cloud: bool, today: date, flagged: Flags) -> list[str]:
    cells = [row.gpu, *([row.provider.value] if row.provider else []), str(row.offers)]
    for pricing in SHOWN:
        best = row.best.get(pricing)
        cells.append(format_cell(best.per_gpu_hour if best else None, money=True))
        cells.append(where(best, not per_cloud, flagged))
    cells.append(age(row.best.get(PricingModel.ON_DEMAND), today))
    if row.provider:
        cells.append(billing(row.provider) or "-")
    return cells
