"""How each cloud names its regions: the documented names and the geographic group of each.

A cloud's :class:`RegionNaming` is one of its per-cloud facts (see :mod:`gpuplan.core.clouds`):
:mod:`gpuplan.core.catalog.regions` asks it, never the cloud's name, so a cloud added later brings
its own naming. Groups are decided from a region's name by the cloud's scheme (AWS
``eu-*``, GCP ``europe-*``, Azure ``westeurope``/``francecentral``...), so a region added
later still lands in its group. The known-region lists are the public regions each cloud
documents (AWS "Regions and Zones", Google Cloud "Regions and zones", Azure "Azure
geographies", read 2026-11); they let a typo be refused with close matches while a real
region without GPU offers is still accepted.

Pure: strings in, strings out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol


class RegionGroup(StrEnum):
    """Geographic groups accepted wherever a region name is."""

    US = "us"
    CANADA = "canada"
    SOUTH_AMERICA = "southamerica"
    EUROPE = "europe"
    ASIA = "asia"
    OCEANIA = "oceania"
    MIDDLE_EAST = "middleeast"
    AFRICA = "africa"


GROUP_ALIASES = {
    "eu": RegionGroup.EUROPE,
    "emea": RegionGroup.EUROPE,
    "usa": RegionGroup.US,
    "na": RegionGroup.US,
    "apac": RegionGroup.ASIA,
    "australia": RegionGroup.OCEANIA,
    "latam": RegionGroup.SOUTH_AMERICA,
    "me": RegionGroup.MIDDLE_EAST,
}


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


_AWS_REGIONS = _names(
    "us-east-1 us-east-2 us-west-1 us-west-2 us-gov-east-1 us-gov-west-1 ca-central-1 "
    "ca-west-1 mx-central-1 sa-east-1 eu-central-1 eu-central-2 eu-west-1 eu-west-2 "
    "eu-west-3 eu-north-1 eu-south-1 eu-south-2 ap-east-1 ap-south-1 ap-south-2 "
    "ap-northeast-1 ap-northeast-2 ap-northeast-3 ap-southeast-1 ap-southeast-2 "
    "ap-southeast-3 ap-southeast-4 ap-southeast-5 ap-southeast-7 me-south-1 me-central-1 "
    "il-central-1 af-south-1"
)
_GCP_REGIONS = _names(
    "us-central1 us-east1 us-east4 us-east5 us-south1 us-west1 us-west2 us-west3 us-west4 "
    "northamerica-northeast1 northamerica-northeast2 northamerica-south1 "
    "southamerica-east1 southamerica-west1 europe-central2 europe-north1 europe-north2 "
    "europe-southwest1 europe-west1 europe-west2 europe-west3 europe-west4 europe-west6 "
    "europe-west8 europe-west9 europe-west10 europe-west12 asia-east1 asia-east2 "
    "asia-northeast1 asia-northeast2 asia-northeast3 asia-south1 asia-south2 "
    "asia-southeast1 asia-southeast2 australia-southeast1 australia-southeast2 "
    "me-central1 me-central2 me-west1 africa-south1"
)
_AZURE_REGIONS = _names(
    "eastus eastus2 centralus northcentralus southcentralus westcentralus westus westus2 "
    "westus3 canadacentral canadaeast brazilsouth mexicocentral northeurope westeurope "
    "uksouth ukwest francecentral francesouth germanywestcentral germanynorth "
    "swedencentral switzerlandnorth switzerlandwest norwayeast norwaywest polandcentral "
    "italynorth spaincentral eastasia southeastasia japaneast japanwest koreacentral "
    "koreasouth centralindia southindia westindia jioindiawest indonesiacentral "
    "malaysiawest newzealandnorth australiaeast australiasoutheast australiacentral "
    "uaenorth uaecentral qatarcentral israelcentral southafricanorth southafricawest"
)


class RegionNaming(Protocol):
    """One cloud's region names: those it documents, and the group each name falls in."""

    @property
    def known(self) -> frozenset[str]: ...

    def group(self, region: str) -> RegionGroup | None:
        """The geographic group of a (lower-case) region name; None when unknown."""
        ...


@dataclass(frozen=True)
class PrefixNaming:
    """Groups by the name's first dash-separated word (AWS ``eu-west-1``, GCP
    ``europe-west4``); ``special`` names override the prefix."""

    known: frozenset[str]
    prefixes: Mapping[str, RegionGroup]
    special: Mapping[str, RegionGroup] = field(default_factory=dict)

    def group(self, region: str) -> RegionGroup | None:
        return self.special.get(region) or self.prefixes.get(region.split("-", 1)[0])


@dataclass(frozen=True)
class WordNaming:
    """Groups by the first word the name contains (Azure ``westeurope``); ``not_with``
    stops a word from matching inside another (``us`` in ``australia...``)."""

    known: frozenset[str]
    words: tuple[tuple[str, RegionGroup], ...]
    not_with: Mapping[str, str] = field(default_factory=dict)

    def group(self, region: str) -> RegionGroup | None:
        for word, group in self.words:
            blocker = self.not_with.get(word)
            if word in region and not (blocker and blocker in region):
                return group
        return None


_AWS_PREFIX = {
    "us": RegionGroup.US,
    "ca": RegionGroup.CANADA,
    "mx": RegionGroup.US,
    "sa": RegionGroup.SOUTH_AMERICA,
    "eu": RegionGroup.EUROPE,
    "ap": RegionGroup.ASIA,
    "me": RegionGroup.MIDDLE_EAST,
    "il": RegionGroup.MIDDLE_EAST,
    "af": RegionGroup.AFRICA,
}
_GCP_PREFIX = {
    "us": RegionGroup.US,
    "northamerica": RegionGroup.CANADA,
    "southamerica": RegionGroup.SOUTH_AMERICA,
    "europe": RegionGroup.EUROPE,
    "asia": RegionGroup.ASIA,
    "australia": RegionGroup.OCEANIA,
    "me": RegionGroup.MIDDLE_EAST,
    "africa": RegionGroup.AFRICA,
}
_GCP_SPECIAL = {"northamerica-south1": RegionGroup.US}  # Querétaro: with the US (as AWS mx-)
_AZURE_WORDS: tuple[tuple[str, RegionGroup], ...] = (
    ("us", RegionGroup.US),
    ("mexico", RegionGroup.US),
    ("canada", RegionGroup.CANADA),
    ("brazil", RegionGroup.SOUTH_AMERICA),
    ("europe", RegionGroup.EUROPE),
    ("uk", RegionGroup.EUROPE),
    ("france", RegionGroup.EUROPE),
    ("germany", RegionGroup.EUROPE),
    ("sweden", RegionGroup.EUROPE),
    ("switzerland", RegionGroup.EUROPE),
    ("norway", RegionGroup.EUROPE),
    ("poland", RegionGroup.EUROPE),
    ("italy", RegionGroup.EUROPE),
    ("spain", RegionGroup.EUROPE),
    ("asia", RegionGroup.ASIA),
    ("japan", RegionGroup.ASIA),
    ("korea", RegionGroup.ASIA),
    ("india", RegionGroup.ASIA),
    ("indonesia", RegionGroup.ASIA),
    ("malaysia", RegionGroup.ASIA),
    ("australia", RegionGroup.OCEANIA),
    ("newzealand", RegionGroup.OCEANIA),
    ("uae", RegionGroup.MIDDLE_EAST),
    ("qatar", RegionGroup.MIDDLE_EAST),
    ("israel", RegionGroup.MIDDLE_EAST),
    ("southafrica", RegionGroup.AFRICA),
)


AWS_NAMING = PrefixNaming(
    _AWS_REGIONS,
    _AWS_PREFIX,
    special=dict.fromkeys(
        ("ap-southeast-2", "ap-southeast-4", "ap-southeast-6"), RegionGroup.OCEANIA
    ),
)
GCP_NAMING = PrefixNaming(_GCP_REGIONS, _GCP_PREFIX, special=_GCP_SPECIAL)
AZURE_NAMING = WordNaming(_AZURE_REGIONS, _AZURE_WORDS, not_with={"us": "australia"})


# The GPU clouds' region names, as their consoles and APIs spell them. A cloud that prices
# one list for everywhere (RunPod, Vast.ai: marketplaces of many hosts) has one region,
# ``global``, in no group; CoreWeave's page prices North America as one area, ``us``.
_GPU_CLOUD_PREFIX = {
    "us": RegionGroup.US,
    "europe": RegionGroup.EUROPE,
    "eu": RegionGroup.EUROPE,
    "uk": RegionGroup.EUROPE,
    "asia": RegionGroup.ASIA,
    "australia": RegionGroup.OCEANIA,
    "me": RegionGroup.MIDDLE_EAST,
}
LAMBDA_NAMING = PrefixNaming(
    _names(
        "us-east-1 us-east-2 us-east-3 us-west-1 us-west-2 us-west-3 us-south-1 us-south-2 "
        "us-south-3 us-midwest-1 europe-central-1 europe-south-1 asia-northeast-1 "
        "asia-northeast-2 asia-south-1 australia-east-1 me-west-1"
    ),
    _GPU_CLOUD_PREFIX,
)
COREWEAVE_NAMING = PrefixNaming(_names("us"), _GPU_CLOUD_PREFIX)
NEBIUS_NAMING = PrefixNaming(
    _names("eu-north1 eu-north2 eu-west1 us-central1 me-west1 uk-south1"), _GPU_CLOUD_PREFIX
)
CRUSOE_NAMING = PrefixNaming(
    _names("us-east1 us-northcentral1 us-southcentral1 eu-iceland1"), _GPU_CLOUD_PREFIX
)
MARKETPLACE_NAMING = PrefixNaming(_names("global"), {})
