"""Toycloud's region naming and its instance-type listing (the discoverer)."""

from __future__ import annotations

from collections.abc import Mapping

from gpuplan.core.catalog.discovery import Discovery, FoundType
from gpuplan.core.catalog.offers import Provider
from gpuplan.providers.cloud_entry import Discoverer
from gpuplan.providers.pricing import Progress
from tests.fakes.toycloud.facts import NAMING, REGIONS

__all__ = ["NAMING", "REGIONS", "types"]
LISTED = (
    FoundType("toy.h100x8", "eu-toy1", "H100", 8, 192, 2048.0, 80.0),
    FoundType("toy.h100x8", "us-toy1", "H100", 8, 192, 2048.0, 80.0),
    FoundType("toy.l4x1", "us-toy1", "L4", 1, 8, 32.0, 24.0),
)
"""What Toycloud's listing API answers: ``toy.l4x1`` is new to the catalog file."""


def types(environ: Mapping[str, str]) -> Discoverer:
    """Always configured (Toycloud needs no credential)."""

    def listing(regions: tuple[str, ...], progress: Progress) -> Discovery:
        provider = Provider("toy")
        found = [t for t in LISTED if t.region in regions]
        return Discovery(provider, found=found, regions=set(regions))

    return listing
