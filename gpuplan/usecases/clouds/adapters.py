"""The provider registry: one entry per cloud, and the one adapter builder every command uses.

Each :class:`CloudEntry` (:mod:`gpuplan.providers.cloud_entry`) owns everything gpuplan
knows about one cloud: the per-scope adapter builder (an AWS region, a GCP project, an
Azure subscription), the actions it carries out and refuses, its catalog file, region
naming, price fetcher, type discoverer, service names and permission file. Builders
import their SDK inside themselves, so building the registry loads no SDK. Adding a
cloud means adding its ``providers/<cloud>/`` package and one entry
(:mod:`gpuplan.usecases.clouds.registry`).

:func:`build_adapters` is the only way from a policy to adapters (``budget``, ``fleet``,
``stop-idle``, ``snooze``, ``savings``, the TUI): one adapter per scope, and a problem
line for every scope that could not be built or discovered (builders return
:class:`ScopeAdapters` to report those without failing the whole cloud). Callers must show
problems and let them change the exit code; nothing here drops one.
A cloud whose SDK is not installed stops the command with one line naming the extra
that brings it (``pip install 'gpuplan[aws]'``, exit 2; :mod:`gpuplan.usecases.clouds.extras`).
``GPUPLAN_FAKE_FLEET=path.json`` swaps every cloud for the in-memory fake entry (a test
and demo hook).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.errors import GpuplanError, ScopeInputError
from gpuplan.core.policy import Policy
from gpuplan.providers.base import CloudAdapter, MetricsSource
from gpuplan.providers.cloud_entry import (
    FAKE_FLEET_ENV,
    BuildContext,
    CloudEntry,
    ScopeAdapters,
    ScopeBuilder,
)
from gpuplan.usecases.clouds import registry as cloud_registry
from gpuplan.usecases.clouds.entries import fake_entry
from gpuplan.usecases.clouds.extras import MissingExtra, needs_extra

__all__ = [
    "FAKE_FLEET_ENV",
    "Adapters",
    "BuildContext",
    "CloudEntry",
    "ProviderRegistry",
    "ScopeAdapters",
    "ScopeBuilder",
    "build_adapters",
    "default_registry",
    "metrics_source",
]


@dataclass
class Adapters:
    """The adapters a policy's scope needs, and the scopes that could not be built."""

    adapters: list[CloudAdapter] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class ProviderRegistry:
    """Entries per cloud; :meth:`build` returns one adapter per scope of a policy."""

    def __init__(self, entries: Mapping[Provider, CloudEntry] | None = None) -> None:
        self.entries: dict[Provider, CloudEntry] = dict(entries or {})

    def register(self, entry: CloudEntry) -> None:
        self.entries[entry.provider] = entry

    def __contains__(self, provider: object) -> bool:
        return provider in self.entries

    def build(
        self, policy: Policy, catalog: Catalog | None, environ: Mapping[str, str]
    ) -> Adapters:
        """Adapters for every scope in the policy; a problem line for each that failed."""
        metrics = metrics_source(policy)
        context = BuildContext(policy, catalog, metrics, environ)
        if environ.get(FAKE_FLEET_ENV):
            return Adapters(list(fake_entry().scopes(context).values()))
        fleet = Adapters()
        for provider in policy.scope.providers:
            entry = self.entries.get(provider)
            if entry is None:
                fleet.problems.append(f"{provider.value}: adapter not available")
                continue
            try:
                with needs_extra(f"{provider.value}"):
                    built = entry.scopes(context)
            except (MissingExtra, ScopeInputError):
                raise
            except GpuplanError as exc:
                fleet.problems.append(_named(provider, exc.message))
                continue
            fleet.adapters.extend(built.values())
            if isinstance(built, ScopeAdapters):
                fleet.problems.extend(_named(provider, p) for p in built.problems)
            if not built and not (isinstance(built, ScopeAdapters) and built.problems):
                fleet.problems.append(f"{provider.value}: {entry.nothing_found}")
        return fleet


def _named(provider: Provider, message: str) -> str:
    """The message, led by the cloud's name unless it already names it (``aws: ...``,
    ``aws 111122223333/us-east-1: ...``)."""
    if message.startswith((f"{provider.value}:", f"{provider.value} ")):
        return message
    return f"{provider.value}: {message}"


def metrics_source(policy: Policy) -> MetricsSource | None:
    """The shared source the policy names (Prometheus), from the metrics registry
    (:mod:`gpuplan.usecases.clouds.metrics_sources`); None: each cloud's own monitoring."""
    from gpuplan.usecases.clouds.metrics_sources import shared_source

    return shared_source(policy)


def default_registry() -> ProviderRegistry:
    """The registry with every cloud registered (:mod:`gpuplan.usecases.clouds.registry`)."""
    return ProviderRegistry({e.provider: e for e in cloud_registry.entries()})


def build_adapters(
    policy: Policy,
    catalog: Catalog | None,
    environ: Mapping[str, str],
    registry: ProviderRegistry | None = None,
) -> Adapters:
    """One adapter per scope of ``policy`` through ``registry`` (default: every cloud)."""
    return (registry or default_registry()).build(policy, catalog, environ)
