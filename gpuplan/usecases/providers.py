"""The provider registry: one entry per cloud, and the one fleet builder every command uses.

Each :class:`CloudEntry` owns everything gpuplan knows about one cloud at the seam: its
policy scope section, the per-scope adapter builder (an AWS region, a GCP project, an
Azure subscription), the actions it carries out, its catalog file and its permission
file. Builders import their SDK inside themselves, so building the registry loads no
SDK. Adding a cloud means adding its ``providers/<cloud>/`` package and one entry here.

:func:`build_fleet` is the only way from a policy to adapters (``budget``, ``fleet``,
``stop-idle``, ``snooze``, ``savings``, the TUI): one adapter per scope, and a problem
line for every scope that could not be built or discovered (builders return
:class:`Scopes` to report those without failing the whole cloud). Callers must show
problems and let them change the exit code; nothing here drops one.
``GPUPLAN_FAKE_FLEET=path.json`` swaps every cloud for the in-memory fake entry (a test
and demo hook).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from gpuplan.core.catalog import Catalog
from gpuplan.core.errors import GpuplanError
from gpuplan.core.fleet import Action
from gpuplan.core.offers import Provider
from gpuplan.core.policy import Policy
from gpuplan.providers.base import LifecycleProvider, MetricsSource

FAKE_FLEET_ENV = "GPUPLAN_FAKE_FLEET"


@dataclass(frozen=True)
class BuildContext:
    """What a builder may read: the policy, the catalog, the metrics source, the env."""

    policy: Policy
    catalog: Catalog | None
    metrics: MetricsSource | None
    environ: Mapping[str, str]


class Scopes(dict[str, LifecycleProvider]):
    """A builder's adapters by scope name, with a problem line for each scope it knows of
    but could not build (a folder it may not list, a subscription it may not read).

    A plain dict is a builder answer too (no problems): builders that discover scopes
    return this, and the registry carries its problems into :class:`Fleet`.
    """

    def __init__(
        self,
        adapters: Mapping[str, LifecycleProvider] | None = None,
        problems: Sequence[str] = (),
    ) -> None:
        super().__init__(adapters or {})
        self.problems: list[str] = list(problems)


ScopeBuilder = Callable[[BuildContext], dict[str, LifecycleProvider]]
"""``context -> {scope name: adapter}`` (or :class:`Scopes`, with problems); raises
GpuplanError when the cloud cannot be reached at all (credentials, profile)."""


@dataclass(frozen=True)
class CloudEntry:
    """Everything about one cloud that the rest of gpuplan may ask for."""

    provider: Provider
    scopes: ScopeBuilder
    actions: Mapping[Action, str]
    """Every acting action -> how it is carried out here, or ``"refused: why"``."""
    catalog_file: str
    permission_file: str
    metrics_sources: tuple[str, ...] = ("native", "prometheus")

    def handles(self, action: Action) -> bool:
        return not self.actions.get(action, "refused").startswith("refused")


@dataclass
class Fleet:
    """The adapters a policy's scope needs, and the scopes that could not be built."""

    adapters: list[LifecycleProvider] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class ProviderRegistry:
    """Entries per cloud; :meth:`build` returns one adapter per scope of a policy."""

    def __init__(self, entries: Mapping[Provider, CloudEntry] | None = None) -> None:
        self.entries: dict[Provider, CloudEntry] = dict(entries or {})

    def register(self, entry: CloudEntry) -> None:
        self.entries[entry.provider] = entry

    def __contains__(self, provider: object) -> bool:
        return provider in self.entries

    def build(self, policy: Policy, catalog: Catalog | None, environ: Mapping[str, str]) -> Fleet:
        """Adapters for every scope in the policy; a problem line for each that failed."""
        metrics = metrics_source(policy)
        context = BuildContext(policy, catalog, metrics, environ)
        if environ.get(FAKE_FLEET_ENV):
            from gpuplan.usecases.cloud_adapters import FAKE_ENTRY

            return Fleet(list(FAKE_ENTRY.scopes(context).values()))
        fleet = Fleet()
        for provider in policy.scope.providers:
            entry = self.entries.get(provider)
            if entry is None:
                fleet.problems.append(f"{provider.value}: adapter not available")
                continue
            try:
                built = entry.scopes(context)
            except GpuplanError as exc:
                fleet.problems.append(_named(provider, exc.message))
                continue
            fleet.adapters.extend(built.values())
            if isinstance(built, Scopes):
                fleet.problems.extend(_named(provider, p) for p in built.problems)
            if not built and not (isinstance(built, Scopes) and built.problems):
                fleet.problems.append(f"{provider.value}: {NOTHING_FOUND[provider]}")
        return fleet


NOTHING_FOUND = {
    Provider.AWS: "scope discovered no accounts (an empty OU, or exclude_accounts covers "
    "every account): nothing was surveyed",
    Provider.GCP: "scope discovered no projects (the folders or organisation hold no active "
    "project, or project_labels match none): nothing was surveyed",
    Provider.AZURE: "scope discovered no subscriptions (the management groups hold none the "
    "identity can read): nothing was surveyed",
}
"""A cloud section that finds nothing to survey is a problem (exit 1), never a quiet 0."""


def _named(provider: Provider, message: str) -> str:
    """The message, led by the cloud's name unless it already names it (``aws: ...``,
    ``aws 111122223333/us-east-1: ...``)."""
    if message.startswith((f"{provider.value}:", f"{provider.value} ")):
        return message
    return f"{provider.value}: {message}"


def metrics_source(policy: Policy) -> MetricsSource | None:
    """The shared source the policy names (Prometheus), from the metrics registry
    (:mod:`gpuplan.usecases.metrics_sources`); None: each cloud's own monitoring."""
    from gpuplan.usecases.metrics_sources import shared_source

    return shared_source(policy)


def default_registry() -> ProviderRegistry:
    """The registry with every real cloud this installation has."""
    from gpuplan.usecases.cloud_adapters import ENTRIES

    return ProviderRegistry({e.provider: e for e in ENTRIES})


def build_fleet(
    policy: Policy,
    catalog: Catalog | None,
    environ: Mapping[str, str],
    registry: ProviderRegistry | None = None,
) -> Fleet:
    """One adapter per scope of ``policy`` through ``registry`` (default: every cloud)."""
    return (registry or default_registry()).build(policy, catalog, environ)
