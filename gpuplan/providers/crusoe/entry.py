"""Crusoe's registry entry: a catalog-only cloud (priced and planned, never listed or
acted on), its facts from :mod:`gpuplan.providers.crusoe.facts`; no price API."""

from __future__ import annotations

from gpuplan.providers.cloud_entry import catalog_entry
from gpuplan.providers.crusoe.facts import FACTS

ENTRY = catalog_entry(FACTS)
