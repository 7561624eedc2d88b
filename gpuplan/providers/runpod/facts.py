"""RunPod's facts for the catalog and the planner: no SDK, no pydantic.

A marketplace of many hosts priced as one list: one region, ``global``.
The shells register these before reading the catalog
(:func:`gpuplan.usecases.clouds.entries.register_facts`); the entry
(:mod:`gpuplan.providers.runpod.entry`) is built from them.
"""

from __future__ import annotations

from gpuplan.core.catalog.region_naming import MARKETPLACE_NAMING
from gpuplan.core.clouds import gpu_cloud

FACTS = gpu_cloud(
    "runpod",
    "RunPod",
    MARKETPLACE_NAMING,
    "per second; no commitment (runpod.io)",
    price_key_env="RUNPOD_API_KEY",
)
