"""RunPod's registry entry: a catalog-only cloud (priced and planned, never listed or
acted on), its facts from :mod:`gpuplan.providers.runpod.facts`;
refreshed through its price API (imported only when called)."""

from __future__ import annotations

import os

from gpuplan.core.catalog.refresh import FetchResult
from gpuplan.providers.cloud_entry import FetchRequest, catalog_entry
from gpuplan.providers.runpod.facts import FACTS


def fetch(req: FetchRequest) -> FetchResult:
    """RunPod's GraphQL ``gpuTypes`` with ``RUNPOD_API_KEY`` (skipped without one)."""
    from gpuplan.providers.runpod.prices import fetch_runpod_prices

    return fetch_runpod_prices(req.regions, req.instance_types, os.environ)


ENTRY = catalog_entry(FACTS, prices=fetch, price_source="RunPod GraphQL API")
