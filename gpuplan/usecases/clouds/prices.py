"""The GPU clouds' price fetchers, as their registry entries hold them.

Each calls the cloud's price API (``gpuplan.providers.<cloud>.prices``) with the user's
key from the environment, imported only when called. The managed clouds' fetchers and
type listings are in their packages (``gpuplan.providers.<cloud>.prices``).
"""

from __future__ import annotations

import os

from gpuplan.core.catalog.refresh import FetchResult
from gpuplan.providers.cloud_entry import FetchRequest


def lambda_prices(req: FetchRequest) -> FetchResult:
    """Lambda's instance-types API with ``LAMBDA_API_KEY`` (skipped without one)."""
    from gpuplan.providers.lambdalabs.prices import fetch_lambda_prices

    return fetch_lambda_prices(req.regions, req.instance_types, os.environ)


def runpod_prices(req: FetchRequest) -> FetchResult:
    """RunPod's GraphQL ``gpuTypes`` with ``RUNPOD_API_KEY`` (skipped without one)."""
    from gpuplan.providers.runpod.prices import fetch_runpod_prices

    return fetch_runpod_prices(req.regions, req.instance_types, os.environ)


def vast_prices(req: FetchRequest) -> FetchResult:
    """Vast.ai's offer search: medians of verified offers (no key needed)."""
    from gpuplan.providers.vastai.prices import fetch_vast_prices

    return fetch_vast_prices(req.regions, req.instance_types, os.environ)
