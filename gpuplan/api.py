"""The Python API: the same queries as the CLI, without the CLI.

>>> from gpuplan.api import load_catalog, find_offers
>>> catalog = load_catalog()
>>> cheapest = find_offers(catalog, gpus=["H100"], pricing="spot", sort="price")[0]
"""

from __future__ import annotations

from gpuplan.core.catalog import Catalog, OfferQuery, query_offers
from gpuplan.core.gpus import GpuSpec, GpuTable
from gpuplan.core.offers import Offer, PricingModel, Provider
from gpuplan.loaders.catalog import load_catalog
from gpuplan.usecases.catalog import find_offers, offer_record

__all__ = [
    "Catalog",
    "GpuSpec",
    "GpuTable",
    "Offer",
    "OfferQuery",
    "PricingModel",
    "Provider",
    "find_offers",
    "load_catalog",
    "offer_record",
    "query_offers",
]
