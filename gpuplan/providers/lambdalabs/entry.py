"""Lambda's registry entry: a catalog-only cloud (priced and planned, never listed or
acted on), its facts from :mod:`gpuplan.providers.lambdalabs.facts`;
refreshed through its price API (imported only when called)."""

from __future__ import annotations

import os

from gpuplan.core.catalog.refresh import FetchResult
from gpuplan.providers.cloud_entry import FetchRequest, catalog_entry
from gpuplan.providers.lambdalabs.facts import FACTS


def fetch(req: FetchRequest) -> FetchResult:
    """Lambda's instance-types API with ``LAMBDA_API_KEY`` (skipped without one)."""
    from gpuplan.providers.lambdalabs.prices import fetch_lambda_prices

    return fetch_lambda_prices(req.regions, req.instance_types, os.environ)


ENTRY = catalog_entry(FACTS, prices=fetch, price_source="Lambda Cloud API instance-types")
