"""``gpuplan gpus --prices``: the cheapest on-demand and spot price per GPU-hour of each
GPU across the clouds, and where, one line each (like ``sky show-gpus``)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING

from gpuplan.cli.catalog_cmd import SPOT_FLAG_LEGEND, as_of_text, catalog_regions, spot_flags
from gpuplan.cli.common import load_catalog_for, split_list
from gpuplan.cli.render import format_cell, plural, print_csv, print_json, render_table, wrap
from gpuplan.core.cheapest import SHOWN, Cheapest, GpuPrices, cheapest_by_gpu
from gpuplan.core.kinds import PricingModel
from gpuplan.core.regions import expand_regions

if TYPE_CHECKING:
    from gpuplan.core.offers import Offer

CSV_COLUMNS = (
    "gpu",
    "provider",
    "offers",
    "on_demand_per_gpu_hour",
    "on_demand_where",
    "spot_per_gpu_hour",
    "spot_where",
    "spot_outlier",
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


def record(row: GpuPrices, flagged: Flags | None = None) -> dict[str, object]:
    out: dict[str, object] = {
        "gpu": row.gpu,
        "provider": row.provider.value if row.provider else None,
        "offers": row.offers,
    }
    for pricing in SHOWN:
        best = row.best.get(pricing)
        out[f"{pricing.value}_per_gpu_hour"] = best.per_gpu_hour if best else None
        out[f"{pricing.value}_where"] = where(best, True) if best else None
    spot = row.best.get(PricingModel.SPOT)
    out["spot_outlier"] = (flagged or {}).get(_key(spot.offer)) if spot else None
    return out


def run_prices(args: argparse.Namespace) -> int:
    from gpuplan.usecases.catalog import find_offers

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
    rows = cheapest_by_gpu(offers, per_provider=args.per_cloud, order=catalog.gpus.names)
    flagged = spot_flags(catalog)
    records = [record(r, flagged) for r in rows]
    if args.json:
        print_json(records)
        return 0
    if args.csv:
        print_csv(CSV_COLUMNS, records)
        return 0
    headers = ["GPU", *(["cloud"] if args.per_cloud else []), "offers"]
    headers += ["on-demand $/GPU-h", "cheapest on-demand at", "spot $/GPU-h", "cheapest spot at"]
    table = []
    for row in rows:
        cells = [row.gpu, *([row.provider.value] if row.provider else []), str(row.offers)]
        for pricing in SHOWN:
            best = row.best.get(pricing)
            cells.append(format_cell(best.per_gpu_hour if best else None, money=True))
            cells.append(where(best, not args.per_cloud, flagged))
        table.append(cells)
    lead = 3 if args.per_cloud else 2
    right = [False] * (lead - 1) + [True, True, False, True, False]
    # Left out first to fit the terminal: the offer count, where on-demand is cheapest.
    drop = (lead - 1, lead + 1)
    print(render_table(headers, table, align_right=right, drop=drop, wrap_last=True))
    print(
        "\n"
        + wrap(
            f"{plural(len(rows), 'line')}; USD per GPU-hour, the lowest list price in the "
            f"catalog for each GPU; list prices as of {as_of_text(offers)}."
        )
    )
    if any("(spot!)" in cells[-1] for cells in table):
        print(wrap(SPOT_FLAG_LEGEND.replace("! =", "spot! =", 1)))
    return 0
