"""CoreWeave's facts for the catalog and the planner: no SDK, no pydantic.

CoreWeave's page prices North America as one area, region ``us``.
The shells register these before reading the catalog
(:func:`gpuplan.usecases.clouds.entries.register_facts`); the entry
(:mod:`gpuplan.providers.coreweave.entry`) is built from them.
"""

from __future__ import annotations

from gpuplan.core.catalog.region_naming import GPU_CLOUD_PREFIXES, PrefixNaming, names
from gpuplan.core.clouds import gpu_cloud

FACTS = gpu_cloud(
    "coreweave",
    "CoreWeave",
    PrefixNaming(names("us"), GPU_CLOUD_PREFIXES),
    "per minute; no minimum charge (CoreWeave docs)",
)
