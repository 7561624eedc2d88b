"""Azure's price fetcher and type listing, as its registry entry holds them for ``catalog
refresh``: the Retail Prices API, and the resource SKUs of ``AZURE_SUBSCRIPTION_ID``
(none without it). The Azure SDK loads only when called.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from gpuplan.core.catalog.discovery import Discovery
from gpuplan.core.catalog.refresh import FetchResult
from gpuplan.providers.cloud_entry import Discoverer, FetchRequest, scoped_discoverer
from gpuplan.providers.pricing import Progress

SUBSCRIPTION_ENV = "AZURE_SUBSCRIPTION_ID"
"""The subscription whose resource SKUs are listed (Azure Resource Manager)."""
ARM_ENDPOINT_ENV = "GPUPLAN_AZURE_ARM_ENDPOINT"
"""An alternative Resource Manager endpoint (a sovereign cloud or a test fake)."""


def fetch(req: FetchRequest) -> FetchResult:
    """Azure Retail Prices API (its endpoint variable or the public one)."""
    from gpuplan.providers.azure import retail_prices as api

    endpoint = os.environ.get(api.ENDPOINT_ENV) or api.DEFAULT_ENDPOINT
    return api.fetch_azure_prices(
        req.regions, req.instance_types, endpoint=endpoint, progress=req.progress
    )


def types(environ: Mapping[str, str]) -> Discoverer | None:
    """Resource SKUs of ``AZURE_SUBSCRIPTION_ID``; None without it."""
    return scoped_discoverer(environ, SUBSCRIPTION_ENV, ARM_ENDPOINT_ENV, _listing)


def _listing(
    subscription: str, regions: tuple[str, ...], endpoint: str | None, progress: Progress
) -> Discovery:
    from gpuplan.providers.azure.type_discovery import discover_azure_types

    return discover_azure_types(subscription, regions, endpoint=endpoint, progress=progress)
