"""Instance-type discovery for ``catalog refresh``: which listing APIs run, and the report.

The listings themselves are in ``gpuplan.providers.pricing.*_discovery`` and the matching
to the GPU table in :mod:`gpuplan.core.catalog.discovery`; this module chooses the listings that
are configured, runs one without letting its failure stop the price refresh, and adds
what it found to a provider's outcome: unknown GPUs, new types left without a price, and
catalog types the API no longer lists.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from gpuplan.core.catalog.discovery import Discovery, NewShapes, missing_types
from gpuplan.core.catalog.offers import Offer, Provider
from gpuplan.core.catalog.refresh import Problem, Severity
from gpuplan.providers.cloud_entry import Discoverer
from gpuplan.providers.pricing import Progress
from gpuplan.usecases.clouds import registry as cloud_registry
from gpuplan.usecases.clouds.extras import MissingExtra, needs_extra

if TYPE_CHECKING:
    from gpuplan.usecases.catalog.refresh import ProviderOutcome


def default_discoverers() -> dict[Provider, Discoverer]:
    """The registered clouds' own listing APIs, where the environment configures them
    (each entry's ``discoverer``); each imports its SDK when called."""
    return cloud_registry.discoverers(os.environ)


def find_types(
    discoverer: Discoverer | None, provider: Provider, scope: tuple[str, ...], progress: Progress
) -> tuple[Discovery | None, list[Problem]]:
    """The provider's listing, or None (with a warning) when it is off or fails."""
    if discoverer is None:
        return None, []
    try:
        with needs_extra(f"{provider.value} instance-type discovery"):
            found = discoverer(scope, progress)
    except MissingExtra:
        raise
    except Exception as exc:  # a failed listing must not stop the price refresh
        why = f"instance-type discovery failed ({_describe(exc)}); known types priced only"
        return None, [Problem(provider, None, Severity.WARNING, why)]
    problems = [
        Problem(provider, region, Severity.WARNING, f"instance-type discovery failed: {why}")
        for region, why in sorted(found.failures.items())
    ]
    return found, problems


def report_discovery(
    outcome: ProviderOutcome, found: Discovery, extra: NewShapes, current: Sequence[Offer]
) -> None:
    """Unknown GPUs, new types left unpriced, and catalog types the listing omits."""
    outcome.unknown_gpus = list(extra.unknown)
    for line in extra.implausible:
        text = f"discovered type {line}; not added"
        outcome.problems.append(Problem(outcome.provider, None, Severity.WARNING, text))
    for unknown in extra.unknown:
        outcome.problems.append(
            Problem(outcome.provider, None, Severity.WARNING, unknown.message())
        )
    added = {o.instance_type for o in outcome.diff.added}
    for name, shape in sorted(extra.shapes.items()):
        if name not in added:
            where = ", ".join(sorted(extra.seen[name]))
            text = f"new type {name} ({shape.gpu_count:g}x {shape.gpu}) in {where}: "
            text += "no price found; not added"
            outcome.problems.append(Problem(outcome.provider, None, Severity.WARNING, text))
    for instance_type, region in missing_types(current, found.found, found.regions):
        outcome.notes.append(f"{instance_type} in {region}: in the catalog, not listed by the API")
    outcome.notes.extend(dict.fromkeys(found.notes))  # once each, not per region


def _describe(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text
