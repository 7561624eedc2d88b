"""Vast.ai's facts for the catalog and the planner: no SDK, no pydantic.

A marketplace of many hosts priced as one list: one region, ``global``.
The shells register these before reading the catalog
(:func:`gpuplan.usecases.clouds.entries.register_facts`); the entry
(:mod:`gpuplan.providers.vastai.entry`) is built from them.
"""

from __future__ import annotations

from gpuplan.core.catalog.region_naming import MARKETPLACE_NAMING
from gpuplan.core.clouds import gpu_cloud

FACTS = gpu_cloud(
    "vast",
    "Vast.ai",
    MARKETPLACE_NAMING,
    "marketplace: host-set prices move daily; a median of verified offers",
    secret_env=("VAST_API_KEY",),  # optional: the offer search answers without it
)
