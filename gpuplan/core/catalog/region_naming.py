"""How each cloud names its regions: the documented names and the geographic group of each.

A cloud's :class:`RegionNaming` is one of its per-cloud facts (see :mod:`gpuplan.core.clouds`),
built in its package's ``facts`` module from the schemes here:
:mod:`gpuplan.core.catalog.regions` asks it, never the cloud's name, so a cloud added later brings
its own naming. Groups are decided from a region's name by the cloud's scheme (a prefix
such as ``eu-*`` or ``europe-*``, a word such as ``westeurope``/``francecentral``), so a
region added later still lands in its group. The known-region lists are the public
regions each cloud documents; they let a typo be refused with close matches while a real
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


def names(text: str) -> frozenset[str]:
    """The region names of a space-separated list."""
    return frozenset(text.split())


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


GPU_CLOUD_PREFIXES = {
    "us": RegionGroup.US,
    "europe": RegionGroup.EUROPE,
    "eu": RegionGroup.EUROPE,
    "uk": RegionGroup.EUROPE,
    "asia": RegionGroup.ASIA,
    "australia": RegionGroup.OCEANIA,
    "me": RegionGroup.MIDDLE_EAST,
}
"""The GPU clouds' region prefixes, as their consoles and APIs spell them (``us-east-1``,
``eu-north1``, ``europe-central-1``)."""
MARKETPLACE_NAMING = PrefixNaming(names("global"), {})
"""A cloud that prices one list for everywhere (a marketplace of many hosts): one region,
``global``, in no group."""
