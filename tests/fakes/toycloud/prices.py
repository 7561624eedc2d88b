"""Toycloud's price API: a fixed price list, answered for the regions and types asked."""

from __future__ import annotations

from decimal import Decimal

from gpuplan.core.catalog.offers import PricingModel, Provider
from gpuplan.core.catalog.refresh import FetchResult, Quote
from gpuplan.providers.cloud_entry import FetchRequest

PRICES = {
    ("toy.h100x8", "eu-toy1"): Decimal("30.50"),
    ("toy.h100x8", "us-toy1"): Decimal("29.00"),
    ("toy.l4x1", "us-toy1"): Decimal("0.70"),
}
SOURCE = "Toycloud price list"


def fetch(request: FetchRequest) -> FetchResult:
    """On-demand quotes for every requested (type, region) the list prices."""
    quotes = [
        Quote(name, region, PricingModel.ON_DEMAND, PRICES[(name, region)])
        for name in request.instance_types
        for region in request.regions
        if (name, region) in PRICES
    ]
    return FetchResult(Provider("toy"), quotes=quotes, regions=set(request.regions))
