"""Lambda's price API: ``GET /api/v1/instance-types`` with the user's key.

The answer maps each instance type name (``gpu_8x_h100_sxm5``) to its
``instance_type`` (``price_cents_per_hour``, specs) and the regions with capacity now.
Lambda prices a type the same in every region, so each requested (type, region) gets
that price; types the API lists that the catalog lacks are named in the report's notes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from gpuplan.core.catalog.offers import PricingModel
from gpuplan.core.catalog.refresh import FetchResult, Quote
from gpuplan.providers.gpu_cloud_api import api_key, call_json, shape_error
from gpuplan.providers.lambdalabs.facts import FACTS as LAMBDA

API_KEY_ENV = LAMBDA.price_key_env
ENDPOINT_ENV = "GPUPLAN_LAMBDA_ENDPOINT"
DEFAULT_ENDPOINT = "https://cloud.lambdalabs.com/api/v1"
SOURCE = "Lambda Cloud API instance-types (price_cents_per_hour)"


def fetch_lambda_prices(
    regions: Sequence[str], instance_types: Sequence[str], environ: Mapping[str, str]
) -> FetchResult:
    """On-demand quotes for the requested types in the requested regions."""
    key = api_key(environ, API_KEY_ENV, "Lambda")
    url = (environ.get(ENDPOINT_ENV) or DEFAULT_ENDPOINT).rstrip("/") + "/instance-types"
    listed = _prices(call_json("GET", url, key=key), url)
    quotes = [
        Quote(name, region, PricingModel.ON_DEMAND, listed[name], ref=f"{name} (Lambda API)")
        for name in instance_types
        if name in listed
        for region in regions
    ]
    result = FetchResult(
        LAMBDA.provider,
        quotes=quotes,
        regions=set(regions),
        models=frozenset({PricingModel.ON_DEMAND}),
    )
    extra = sorted(set(listed) - set(instance_types))
    if extra:
        result.notes.append(f"listed by Lambda, not in the catalog: {', '.join(extra)}")
    return result


def _prices(answer: Any, url: str) -> dict[str, Decimal]:
    """Instance type name -> USD per hour, from ``price_cents_per_hour``."""
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, dict):
        raise shape_error(url, "no 'data' object")
    out: dict[str, Decimal] = {}
    for name, item in data.items():
        kind = item.get("instance_type") if isinstance(item, dict) else None
        cents = kind.get("price_cents_per_hour") if isinstance(kind, dict) else None
        if isinstance(cents, bool) or not isinstance(cents, int | float) or cents <= 0:
            raise shape_error(url, f"{name}: no positive price_cents_per_hour")
        out[str(name)] = Decimal(str(cents)) / 100
    return out
