"""AWS's price fetcher and type listing, as its registry entry holds them for ``catalog
refresh``: the Price List API with EC2 spot price history, and DescribeInstanceTypes /
-Offerings (always on: the boto3 credential chain). boto3 loads only when called.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuplan.core.catalog.discovery import Discovery
from gpuplan.core.catalog.refresh import FetchResult
from gpuplan.providers.cloud_entry import Discoverer, FetchRequest
from gpuplan.providers.pricing import Progress


def fetch(req: FetchRequest) -> FetchResult:
    """AWS Price List API + EC2 spot price history."""
    from gpuplan.providers.aws import price_list as api

    return api.fetch_aws_prices(req.regions, req.instance_types, now=req.now, progress=req.progress)


def types(environ: Mapping[str, str]) -> Discoverer:
    """EC2 DescribeInstanceTypes/-Offerings, always on (the boto3 credential chain)."""

    def listing(regions: tuple[str, ...], progress: Progress) -> Discovery:
        from gpuplan.providers.aws.type_discovery import discover_aws_types

        return discover_aws_types(regions, progress=progress)

    return listing
