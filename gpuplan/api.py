"""The Python API: the same queries as the CLI, without the CLI.

Importing it registers every listed cloud's facts
(:func:`gpuplan.usecases.clouds.entries.register_facts`), as the CLI does first.

>>> from gpuplan.api import load_catalog, find_offers
>>> catalog = load_catalog()
>>> best = find_offers(catalog, gpus=["H100"], pricing="spot", sort="price-per-gpu")[0]
>>> plan = estimate(catalog, EstimateArgs(params="7B", tokens="1T", gpu=["H100"], gpus="64"))
>>> best = plan.options[0]
"""

from __future__ import annotations

from gpuplan.core.catalog.gpus import GpuSpec, GpuTable
from gpuplan.core.catalog.offers import Offer, PricingModel, Provider
from gpuplan.core.catalog.query import Catalog, OfferQuery, query_offers
from gpuplan.core.planner.constraints import PlanConstraints
from gpuplan.core.planner.records import plan_record
from gpuplan.loaders.catalog import load_catalog
from gpuplan.usecases.catalog.lookup import find_offers, offer_record
from gpuplan.usecases.clouds.entries import register_facts
from gpuplan.usecases.planner.estimate import EstimateArgs, estimate

register_facts()  # every listed cloud's facts (no SDK), as the CLI registers them first

__all__ = [
    "Catalog",
    "EstimateArgs",
    "GpuSpec",
    "GpuTable",
    "Offer",
    "OfferQuery",
    "PlanConstraints",
    "PricingModel",
    "Provider",
    "estimate",
    "find_offers",
    "load_catalog",
    "offer_record",
    "plan_record",
    "query_offers",
]
