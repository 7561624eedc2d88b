"""Vast.ai's registry entry: a catalog-only cloud (priced and planned, never listed or
acted on), its facts from :mod:`gpuplan.providers.vastai.facts`;
refreshed through its price API (imported only when called)."""

from __future__ import annotations

import os

from gpuplan.core.catalog.refresh import FetchResult
from gpuplan.providers.cloud_entry import FetchRequest, catalog_entry
from gpuplan.providers.vastai.facts import FACTS


def fetch(req: FetchRequest) -> FetchResult:
    """Vast.ai's offer search: medians of verified offers (no key needed)."""
    from gpuplan.providers.vastai.prices import fetch_vast_prices

    return fetch_vast_prices(req.regions, req.instance_types, os.environ)


ENTRY = catalog_entry(
    FACTS, prices=fetch, price_source="Vast.ai offer search (median of verified offers)"
)
