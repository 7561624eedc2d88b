"""Toycloud's facts: its provider, catalog file, region naming and local-disk wording.

Light (the core only), as every cloud's facts module is: the shells register it before
reading the catalog, so ``gpuplan catalog`` prices Toycloud without loading the registry.
"""

from __future__ import annotations

from gpuplan.core.catalog.kinds import Provider
from gpuplan.core.catalog.region_naming import PrefixNaming, RegionGroup
from gpuplan.core.clouds import CloudFacts

REGIONS = ("eu-toy1", "us-toy1")
NAMING = PrefixNaming(frozenset(REGIONS), {"eu": RegionGroup.EUROPE, "us": RegionGroup.US})

FACTS = CloudFacts(Provider.named("toy"), "toy.csv", NAMING, "Toycloud scratch disks")
