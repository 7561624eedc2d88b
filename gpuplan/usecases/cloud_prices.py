"""The built-in clouds' price fetchers and type discoverers, as their registry entries hold them.

Each fetcher calls the cloud's price API (``gpuplan.providers.pricing.<cloud>``) and
each discoverer setup returns the cloud's instance-type listing when the environment
configures one: AWS always (the boto3 credential chain); GCP when ``GPUPLAN_GCP_PROJECT``
names a project; Azure when ``AZURE_SUBSCRIPTION_ID`` names a subscription. Every one
imports its SDK only when called.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from gpuplan.core.discovery import Discovery
from gpuplan.core.refresh import FetchResult
from gpuplan.providers.cloud_entry import Discoverer, FetchRequest
from gpuplan.providers.pricing import Progress
from gpuplan.providers.pricing import discovery_config as config


def aws_prices(req: FetchRequest) -> FetchResult:
    """AWS Price List API + EC2 spot price history."""
    from gpuplan.providers.pricing import aws as aws_prices

    return aws_prices.fetch_aws_prices(
        req.regions, req.instance_types, now=req.now, progress=req.progress
    )


def gcp_prices(req: FetchRequest) -> FetchResult:
    """Cloud Billing Catalog API (``GPUPLAN_GCP_BILLING_ENDPOINT`` or Google's)."""
    from gpuplan.providers.pricing import gcp as gcp_prices

    endpoint = os.environ.get(gcp_prices.ENDPOINT_ENV) or None
    return gcp_prices.fetch_gcp_prices(
        req.regions, req.shapes, known=req.known, endpoint=endpoint, progress=req.progress
    )


def azure_prices(req: FetchRequest) -> FetchResult:
    """Azure Retail Prices API (its endpoint variable or the public one)."""
    from gpuplan.providers.pricing import azure as az

    endpoint = os.environ.get(az.ENDPOINT_ENV) or az.DEFAULT_ENDPOINT
    return az.fetch_azure_prices(
        req.regions, req.instance_types, endpoint=endpoint, progress=req.progress
    )


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


def aws_types(environ: Mapping[str, str]) -> Discoverer:
    """EC2 DescribeInstanceTypes/-Offerings, always on (the boto3 credential chain)."""

    def aws(regions: tuple[str, ...], progress: Progress) -> Discovery:
        from gpuplan.providers.pricing.aws_discovery import discover_aws_types

        return discover_aws_types(regions, progress=progress)

    return aws


def gcp_types(environ: Mapping[str, str]) -> Discoverer | None:
    """Compute Engine machine types of ``GPUPLAN_GCP_PROJECT``; None without it."""
    return _scoped(environ, config.GCP_PROJECT_ENV, config.GCP_COMPUTE_ENDPOINT_ENV, _gcp_listing)


def azure_types(environ: Mapping[str, str]) -> Discoverer | None:
    """Resource SKUs of ``AZURE_SUBSCRIPTION_ID``; None without it."""
    return _scoped(
        environ, config.AZURE_SUBSCRIPTION_ENV, config.AZURE_ARM_ENDPOINT_ENV, _azure_listing
    )


Listing = Callable[[str, tuple[str, ...], str | None, Progress], Discovery]
"""(project or subscription, regions, endpoint or None, progress) -> the listing."""


def _scoped(
    environ: Mapping[str, str], scope_env: str, endpoint_env: str, listing: Listing
) -> Discoverer | None:
    """The listing of the scope ``scope_env`` names (None when unset), at ``endpoint_env``."""
    scope = environ.get(scope_env)
    if not scope:
        return None
    endpoint = environ.get(endpoint_env) or None
    return lambda regions, progress: listing(scope, regions, endpoint, progress)


def _gcp_listing(
    project: str, regions: tuple[str, ...], endpoint: str | None, progress: Progress
) -> Discovery:
    from gpuplan.providers.pricing.gcp_discovery import discover_gcp_types

    return discover_gcp_types(project, regions, endpoint=endpoint, progress=progress)


def _azure_listing(
    subscription: str, regions: tuple[str, ...], endpoint: str | None, progress: Progress
) -> Discovery:
    from gpuplan.providers.pricing.azure_discovery import discover_azure_types

    return discover_azure_types(subscription, regions, endpoint=endpoint, progress=progress)
