"""Crusoe's facts for the catalog and the planner: no SDK, no pydantic.

Regions as Crusoe's console spells them.
The shells register these before reading the catalog
(:func:`gpuplan.usecases.clouds.entries.register_facts`); the entry
(:mod:`gpuplan.providers.crusoe.entry`) is built from them.
"""

from __future__ import annotations

from gpuplan.core.catalog.region_naming import GPU_CLOUD_PREFIXES, PrefixNaming, names
from gpuplan.core.clouds import gpu_cloud

FACTS = gpu_cloud(
    "crusoe",
    "Crusoe",
    PrefixNaming(
        names("us-east1 us-northcentral1 us-southcentral1 eu-iceland1"), GPU_CLOUD_PREFIXES
    ),
    "per GPU-hour list; granularity not stated in the page read",
)
