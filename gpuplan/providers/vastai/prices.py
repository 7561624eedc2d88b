"""Vast.ai's offer search: the median per-GPU price of verified, rentable offers.

One search per catalog GPU word (``h100-sxm`` -> Vast's ``H100 SXM``) for on-demand
offers that are verified and rentable now; the quote for a type ``<gpu>.<n>x`` is ``n``
times the median of ``dph_total / num_gpus`` over the offers found, and the report notes
how many offers each median rests on. Fewer than :data:`MIN_OFFERS` offers: no quote (a
median of one or two is an outlier by another name).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from gpuplan.core.catalog.offers import PricingModel
from gpuplan.core.catalog.refresh import FetchResult, Quote
from gpuplan.providers.gpu_cloud_api import call_json, shape_error
from gpuplan.providers.vastai.facts import FACTS as VAST

API_KEY_ENV = "VAST_API_KEY"
ENDPOINT_ENV = "GPUPLAN_VAST_ENDPOINT"
DEFAULT_ENDPOINT = "https://console.vast.ai/api/v0/bundles/"
SOURCE = "Vast.ai offer search (median of verified rentable on-demand offers)"
MIN_OFFERS = 3
GPU_NAMES = {
    "h100-sxm": "H100 SXM",
    "h100-nvl": "H100 NVL",
    "h200": "H200",
    "b200": "B200",
    "a100-sxm": "A100 SXM4",
    "l40s": "L40S",
}
"""The catalog's GPU word -> Vast.ai's ``gpu_name``."""


def fetch_vast_prices(
    regions: Sequence[str], instance_types: Sequence[str], environ: Mapping[str, str]
) -> FetchResult:
    """Median-based on-demand quotes for the requested ``<gpu>.<n>x`` types."""
    url = environ.get(ENDPOINT_ENV) or DEFAULT_ENDPOINT
    key = environ.get(API_KEY_ENV, "").strip() or None
    result = FetchResult(
        VAST.provider, regions=set(regions), models=frozenset({PricingModel.ON_DEMAND})
    )
    medians: dict[str, Decimal | None] = {}
    for name in instance_types:
        gpu, _, size = name.partition(".")
        if gpu not in GPU_NAMES or not size.removesuffix("x").isdigit():
            continue
        if gpu not in medians:
            medians[gpu] = _median(gpu, url, key, result.notes)
        median = medians[gpu]
        if median is not None:
            hourly = (median * int(size.removesuffix("x"))).quantize(Decimal("0.0001"))
            result.quotes += [Quote(name, r, PricingModel.ON_DEMAND, hourly) for r in regions]
    return result


def _median(gpu: str, url: str, key: str | None, notes: list[str]) -> Decimal | None:
    query = {
        "gpu_name": {"eq": GPU_NAMES[gpu]},
        "verified": {"eq": True},
        "rentable": {"eq": True},
        "type": "on-demand",
        "limit": 1000,
    }
    per_gpu = _per_gpu_prices(call_json("POST", url, key=key, body=query), url)
    if len(per_gpu) < MIN_OFFERS:
        notes.append(
            f"{gpu}: {len(per_gpu)} verified offer(s), fewer than {MIN_OFFERS}: not quoted"
        )
        return None
    median = Decimal(str(statistics.median(per_gpu)))
    notes.append(f"{gpu}: median ${median:.4f}/GPU-h of {len(per_gpu)} verified offers")
    return median


def _per_gpu_prices(answer: Any, url: str) -> list[Decimal]:
    offers = answer.get("offers") if isinstance(answer, dict) else None
    if not isinstance(offers, list):
        raise shape_error(url, "no 'offers' list")
    out = []
    for offer in offers:
        price = offer.get("dph_total") if isinstance(offer, dict) else None
        gpus = offer.get("num_gpus") if isinstance(offer, dict) else None
        if isinstance(price, int | float) and isinstance(gpus, int) and price > 0 and gpus > 0:
            out.append(Decimal(str(price)) / gpus)
    return out
