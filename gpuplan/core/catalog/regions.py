"""Cloud regions: which names each provider has, and the geographic groups people ask for.

``--region europe`` means every European region of every cloud; ``--region eu-west-1``
one region. Each cloud's naming (its documented regions, and the group a name falls in)
is one of its facts (:class:`gpuplan.core.clouds.CloudFacts`, the naming schemes in
:mod:`gpuplan.core.catalog.region_naming`); nothing here knows a cloud by name.

Pure: strings in, strings out.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping

from gpuplan.core.catalog.kinds import Provider
from gpuplan.core.catalog.region_naming import GROUP_ALIASES, RegionGroup
from gpuplan.core.clouds import facts_of, registered
from gpuplan.core.errors import InputError

__all__ = [
    "GROUP_ALIASES",
    "RegionGroup",
    "close_matches",
    "expand_regions",
    "known_regions",
    "parse_group",
    "provider_region_problem",
    "region_group",
    "unknown_region_error",
]


def region_group(provider: Provider, region: str) -> RegionGroup | None:
    """The geographic group of ``region`` by the provider's naming scheme; None if unknown."""
    return facts_of(provider).regions.group(region.strip().lower())


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
    providers = [provider] if provider is not None else registered()
    out = {r for p in providers for r in facts_of(p).regions.known}
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


REGION_NAME = re.compile(r"[a-z][a-z0-9-]{1,62}")
"""How every cloud spells a region (``us-east-1``, ``us-central1``, ``eastus``)."""


def region_name_problem(word: str) -> str | None:
    """Why ``word`` cannot be a region of any cloud (spelling only); None when it can be."""
    if REGION_NAME.fullmatch(word):
        return None
    return (
        f"{word[:64]!r} is not a region name (lower-case letters, digits and '-', "
        "e.g. us-east-1, us-central1, eastus)"
    )


def provider_region_problem(provider: Provider, region: str) -> str | None:
    """Why ``region`` is not a region of ``provider`` (another cloud's, or a typo); None if ok."""
    name = region.strip().lower()
    known = facts_of(provider).regions.known
    if name in known:
        return None
    owners = [p.value for p in registered() if name in facts_of(p).regions.known]
    if owners:
        return f"{region!r} is a region of {'/'.join(owners)}, not of {provider.value}"
    matches = close_matches(name, known)
    hint = f"; did you mean {', '.join(matches)}?" if matches else ""
    return f"unknown {provider.value} region {region!r}{hint}"
