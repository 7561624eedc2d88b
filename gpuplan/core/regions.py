"""Cloud regions: which names each provider has, and the geographic groups people ask for.

``--region europe`` means every European region of every cloud; ``--region eu-west-1``
one region. Groups are decided from the region's name by each cloud's naming scheme
(AWS ``eu-*``, GCP ``europe-*``, Azure ``westeurope``/``francecentral``...), so a region
added later still lands in its group. The known-region lists below are the public
regions each cloud documents (AWS "Regions and Zones", Google Cloud "Regions and zones",
Azure "Azure geographies", read 2026-11); they let a typo be refused with close matches
while a real region without GPU offers is still accepted.

Pure: strings in, strings out.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from enum import StrEnum

from gpuplan.core.errors import InputError
from gpuplan.core.offers import Provider


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


KNOWN_REGIONS: Mapping[Provider, frozenset[str]] = {
    Provider.AWS: _names(
        "us-east-1 us-east-2 us-west-1 us-west-2 us-gov-east-1 us-gov-west-1 ca-central-1 "
        "ca-west-1 mx-central-1 sa-east-1 eu-central-1 eu-central-2 eu-west-1 eu-west-2 "
        "eu-west-3 eu-north-1 eu-south-1 eu-south-2 ap-east-1 ap-south-1 ap-south-2 "
        "ap-northeast-1 ap-northeast-2 ap-northeast-3 ap-southeast-1 ap-southeast-2 "
        "ap-southeast-3 ap-southeast-4 ap-southeast-5 ap-southeast-7 me-south-1 me-central-1 "
        "il-central-1 af-south-1"
    ),
    Provider.GCP: _names(
        "us-central1 us-east1 us-east4 us-east5 us-south1 us-west1 us-west2 us-west3 us-west4 "
        "northamerica-northeast1 northamerica-northeast2 northamerica-south1 "
        "southamerica-east1 southamerica-west1 europe-central2 europe-north1 europe-north2 "
        "europe-southwest1 europe-west1 europe-west2 europe-west3 europe-west4 europe-west6 "
        "europe-west8 europe-west9 europe-west10 europe-west12 asia-east1 asia-east2 "
        "asia-northeast1 asia-northeast2 asia-northeast3 asia-south1 asia-south2 "
        "asia-southeast1 asia-southeast2 australia-southeast1 australia-southeast2 "
        "me-central1 me-central2 me-west1 africa-south1"
    ),
    Provider.AZURE: _names(
        "eastus eastus2 centralus northcentralus southcentralus westcentralus westus westus2 "
        "westus3 canadacentral canadaeast brazilsouth mexicocentral northeurope westeurope "
        "uksouth ukwest francecentral francesouth germanywestcentral germanynorth "
        "swedencentral switzerlandnorth switzerlandwest norwayeast norwaywest polandcentral "
        "italynorth spaincentral eastasia southeastasia japaneast japanwest koreacentral "
        "koreasouth centralindia southindia westindia jioindiawest indonesiacentral "
        "malaysiawest newzealandnorth australiaeast australiasoutheast australiacentral "
        "uaenorth uaecentral qatarcentral israelcentral southafricanorth southafricawest"
    ),
}

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
_AWS_OCEANIA = frozenset({"ap-southeast-2", "ap-southeast-4", "ap-southeast-6"})
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


def region_group(provider: Provider, region: str) -> RegionGroup | None:
    """The geographic group of ``region`` by the provider's naming scheme; None if unknown."""
    name = region.strip().lower()
    if provider is Provider.AWS:
        if name in _AWS_OCEANIA:
            return RegionGroup.OCEANIA
        return _AWS_PREFIX.get(name.split("-", 1)[0])
    if provider is Provider.GCP:
        return _GCP_SPECIAL.get(name) or _GCP_PREFIX.get(name.split("-", 1)[0])
    for word, group in _AZURE_WORDS:
        if word in name and not (word == "us" and "australia" in name):
            return group
    return None


def parse_group(word: str) -> RegionGroup | None:
    """``europe``/``EU`` -> EUROPE; None when ``word`` is not a group name."""
    key = word.strip().lower().replace("-", "").replace("_", "").replace(" ", "")
    if key in GROUP_ALIASES:
        return GROUP_ALIASES[key]
    try:
        return RegionGroup(key)
    except ValueError:
        return None


def known_regions(provider: Provider | None = None, extra: Iterable[str] = ()) -> set[str]:
    """The documented regions of one provider (or all), plus ``extra`` (e.g. the catalog's)."""
    providers = [provider] if provider is not None else list(Provider)
    out = {r for p in providers for r in KNOWN_REGIONS[p]}
    out.update(extra)
    return out


def close_matches(word: str, candidates: Iterable[str], limit: int = 3) -> list[str]:
    """Up to ``limit`` names close to ``word`` (typos, missing dashes)."""
    pool = sorted(set(candidates))
    return difflib.get_close_matches(word.strip().lower(), pool, n=limit, cutoff=0.6)


def unknown_region_error(word: str, candidates: Iterable[str], what: str = "--region") -> str:
    """One line: the unknown name, close matches, and that groups exist."""
    matches = close_matches(word, [*candidates, *(g.value for g in RegionGroup)])
    hint = f"; did you mean {', '.join(matches)}?" if matches else ""
    groups = ", ".join(g.value for g in RegionGroup)
    return f"{what}: unknown region {word!r}{hint} (region groups: {groups})"


def expand_regions(
    words: Iterable[str], available: Mapping[Provider, Iterable[str]], what: str = "--region"
) -> frozenset[str]:
    """Region names and group names -> the concrete region names they stand for.

    ``available`` is each provider's regions in the data at hand (e.g. the catalog); a
    group expands to those of its members. A name neither available nor documented
    raises :class:`InputError` with close matches.
    """
    seen = {p: set(regions) for p, regions in available.items()}
    every = known_regions(extra={r for regions in seen.values() for r in regions})
    out: set[str] = set()
    for word in (w.strip() for w in words):
        if not word:
            continue
        group = parse_group(word)
        if group is not None:
            out.update(r for p, regs in seen.items() for r in regs if region_group(p, r) is group)
            continue
        if word.lower() not in every:
            raise InputError(unknown_region_error(word, every, what))
        out.add(word.lower())
    return frozenset(out)


def provider_region_problem(provider: Provider, region: str) -> str | None:
    """Why ``region`` is not a region of ``provider`` (another cloud's, or a typo); None if ok."""
    name = region.strip().lower()
    if name in KNOWN_REGIONS[provider]:
        return None
    owners = [p.value for p in Provider if name in KNOWN_REGIONS[p]]
    if owners:
        return f"{region!r} is a region of {'/'.join(owners)}, not of {provider.value}"
    matches = close_matches(name, KNOWN_REGIONS[provider])
    hint = f"; did you mean {', '.join(matches)}?" if matches else ""
    return f"unknown {provider.value} region {region!r}{hint}"
