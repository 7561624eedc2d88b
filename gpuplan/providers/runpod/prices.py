"""RunPod's price API: the GraphQL ``gpuTypes`` query with the user's key.

Each GPU type answers its per-GPU on-demand price in each tier (``securePrice``,
``communityPrice``); a catalog type ``<gpu>.<n>x.<tier>`` costs ``n`` times the price of
its GPU in its tier.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from gpuplan.core.catalog.offers import PricingModel
from gpuplan.core.catalog.refresh import FetchResult, Quote
from gpuplan.providers.gpu_cloud_api import api_key, call_json, shape_error
from gpuplan.providers.runpod.facts import FACTS as RUNPOD

API_KEY_ENV = RUNPOD.price_key_env
ENDPOINT_ENV = "GPUPLAN_RUNPOD_ENDPOINT"
DEFAULT_ENDPOINT = "https://api.runpod.io/graphql"
SOURCE = "RunPod GraphQL API gpuTypes (securePrice, communityPrice)"
QUERY = "query GpuTypes { gpuTypes { id displayName memoryInGb securePrice communityPrice } }"
GPU_IDS = {
    "h100-sxm": "NVIDIA H100 80GB HBM3",
    "h100-pcie": "NVIDIA H100 PCIe",
    "h100-nvl": "NVIDIA H100 NVL",
    "h200": "NVIDIA H200",
    "b200": "NVIDIA B200",
    "a100-sxm": "NVIDIA A100-SXM4-80GB",
    "a100-pcie": "NVIDIA A100 80GB PCIe",
    "l40s": "NVIDIA L40S",
}
"""The catalog's GPU word -> RunPod's GPU type id."""
TIERS = {"secure": "securePrice", "community": "communityPrice"}


def fetch_runpod_prices(
    regions: Sequence[str], instance_types: Sequence[str], environ: Mapping[str, str]
) -> FetchResult:
    """On-demand quotes for the requested ``<gpu>.<n>x.<tier>`` types."""
    key = api_key(environ, API_KEY_ENV, "RunPod")
    url = environ.get(ENDPOINT_ENV) or DEFAULT_ENDPOINT
    types = _gpu_types(call_json("POST", url, key=key, body={"query": QUERY}), url)
    quotes = []
    for name in instance_types:
        parsed = parse_type(name)
        if parsed is None:
            continue
        gpu, count, tier = parsed
        per_gpu = types.get(GPU_IDS.get(gpu, ""), {}).get(TIERS[tier])
        if per_gpu is not None:
            hourly = per_gpu * count
            quotes += [Quote(name, r, PricingModel.ON_DEMAND, hourly, ref=name) for r in regions]
    return FetchResult(
        RUNPOD.provider,
        quotes=quotes,
        regions=set(regions),
        models=frozenset({PricingModel.ON_DEMAND}),
    )


def parse_type(name: str) -> tuple[str, int, str] | None:
    """``h100-sxm.8x.secure`` -> ("h100-sxm", 8, "secure"); None for another shape."""
    parts = name.split(".")
    if len(parts) != 3 or parts[2] not in TIERS or not parts[1].removesuffix("x").isdigit():
        return None
    return parts[0], int(parts[1].removesuffix("x")), parts[2]


def _gpu_types(answer: Any, url: str) -> dict[str, dict[str, Decimal]]:
    """GPU type id -> {price field: USD per GPU-hour}, for the priced tiers only."""
    data = answer.get("data") if isinstance(answer, dict) else None
    rows = data.get("gpuTypes") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise shape_error(url, "no data.gpuTypes list")
    out: dict[str, dict[str, Decimal]] = {}
    for row in rows:
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            raise shape_error(url, "a gpuTypes entry without an id")
        prices = {}
        for field in TIERS.values():
            value = row.get(field)
            if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
                prices[field] = Decimal(str(value))
        out[row["id"]] = prices
    return out
