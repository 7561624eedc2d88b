"""Nebius's facts for the catalog and the planner: no SDK, no pydantic.

Regions as Nebius's console spells them.
The shells register these before reading the catalog
(:func:`gpuplan.usecases.clouds.entries.register_facts`); the entry
(:mod:`gpuplan.providers.nebius.entry`) is built from them.
"""

from __future__ import annotations

from gpuplan.core.catalog.region_naming import GPU_CLOUD_PREFIXES, PrefixNaming, names
from gpuplan.core.clouds import gpu_cloud

FACTS = gpu_cloud(
    "nebius",
    "Nebius",
    PrefixNaming(
        names("eu-north1 eu-north2 eu-west1 us-central1 me-west1 uk-south1"), GPU_CLOUD_PREFIXES
    ),
    "per second; pay-as-you-go, commitments optional (Nebius docs)",
)
