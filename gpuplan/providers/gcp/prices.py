"""GCP's price fetcher and type listing, as its registry entry holds them for ``catalog
refresh``: the Cloud Billing Catalog API, and Compute Engine machine types of
``GPUPLAN_GCP_PROJECT`` (none without it). The Google SDK loads only when called.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from gpuplan.core.catalog.discovery import Discovery
from gpuplan.core.catalog.refresh import FetchResult
from gpuplan.providers.cloud_entry import Discoverer, FetchRequest, scoped_discoverer
from gpuplan.providers.pricing import Progress

PROJECT_ENV = "GPUPLAN_GCP_PROJECT"
"""The project whose zones' machine types are listed (Compute Engine API)."""
COMPUTE_ENDPOINT_ENV = "GPUPLAN_GCP_COMPUTE_ENDPOINT"
"""An alternative Compute Engine endpoint (a mirror; ``http://`` goes anonymous, REST)."""


def fetch(req: FetchRequest) -> FetchResult:
    """Cloud Billing Catalog API (``GPUPLAN_GCP_BILLING_ENDPOINT`` or Google's)."""
    from gpuplan.providers.gcp import billing_catalog as api

    endpoint = os.environ.get(api.ENDPOINT_ENV) or None
    return api.fetch_gcp_prices(
        req.regions, req.shapes, known=req.known, endpoint=endpoint, progress=req.progress
    )


def types(environ: Mapping[str, str]) -> Discoverer | None:
    """Compute Engine machine types of ``GPUPLAN_GCP_PROJECT``; None without it."""
    return scoped_discoverer(environ, PROJECT_ENV, COMPUTE_ENDPOINT_ENV, _listing)


def _listing(
    project: str, regions: tuple[str, ...], endpoint: str | None, progress: Progress
) -> Discovery:
    from gpuplan.providers.gcp.type_discovery import discover_gcp_types

    return discover_gcp_types(project, regions, endpoint=endpoint, progress=progress)
