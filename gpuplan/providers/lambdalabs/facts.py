"""Lambda's facts for the catalog and the planner: no SDK, no pydantic.

Regions as Lambda's console and API spell them.
The shells register these before reading the catalog
(:func:`gpuplan.usecases.clouds.entries.register_facts`); the entry
(:mod:`gpuplan.providers.lambdalabs.entry`) is built from them.
"""

from __future__ import annotations

from gpuplan.core.catalog.region_naming import GPU_CLOUD_PREFIXES, PrefixNaming, names
from gpuplan.core.clouds import gpu_cloud

FACTS = gpu_cloud(
    "lambda",
    "Lambda",
    PrefixNaming(
        names(
            "us-east-1 us-east-2 us-east-3 us-west-1 us-west-2 us-west-3 us-south-1 us-south-2 "
            "us-south-3 us-midwest-1 europe-central-1 europe-south-1 asia-northeast-1 "
            "asia-northeast-2 asia-south-1 australia-east-1 me-west-1"
        ),
        GPU_CLOUD_PREFIXES,
    ),
    "per minute; no minimum, no commitment (lambda.ai)",
    price_key_env="LAMBDA_API_KEY",
)
