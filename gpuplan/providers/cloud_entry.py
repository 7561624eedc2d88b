"""What a registry entry is: :class:`CloudEntry`, one object holding everything about a cloud.

An entry holds the cloud's identity and lower-layer facts (:class:`CloudFacts`: provider,
catalog file, region naming), its per-scope adapter builder, the actions it carries out
and those it refuses (``{Action: reason}``, as SkyPilot keeps unsupported features), its
price fetcher and type discoverer for ``catalog refresh``, its service names for the
per-service caps, its permission file, and what to say when its scope finds nothing.
Every per-cloud table of gpuplan reads the entries (:mod:`gpuplan.usecases.clouds.registry`).

This module is the bottom of the registry: it imports the core and the provider protocol
only, so the entries (:mod:`gpuplan.usecases.clouds.entries`), the registry and its
readers import it without a cycle (an import-linter contract keeps it so).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from gpuplan.core.catalog.discovery import Discovery
from gpuplan.core.catalog.offers import Offer, PricingModel, Provider
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.catalog.refresh import FetchResult
from gpuplan.core.catalog.region_naming import RegionNaming
from gpuplan.core.clouds import CloudFacts, Feature
from gpuplan.core.errors import InputError
from gpuplan.core.lifecycle.actions import Entry as StepsOrRefusal
from gpuplan.core.lifecycle.actions import Refusal, Steps
from gpuplan.core.lifecycle.instances import ACTING, Action
from gpuplan.core.policy import Policy
from gpuplan.core.policy.bill_settings import BillSettings
from gpuplan.providers.base import CloudAdapter, MetricsSource
from gpuplan.providers.billing.base import CostSource
from gpuplan.providers.pricing import Progress

if TYPE_CHECKING:
    from pydantic import BaseModel

FAKE_FLEET_ENV = "GPUPLAN_FAKE_FLEET"


class Service(StrEnum):
    """What a scope task asks a cloud for."""

    LISTING = "listing"
    METRICS = "metrics"


@dataclass(frozen=True)
class BuildContext:
    """What a builder may read: the policy, the catalog, the metrics source, the env."""

    policy: Policy
    catalog: Catalog | None
    metrics: MetricsSource | None
    environ: Mapping[str, str]


class ScopeAdapters(dict[str, CloudAdapter]):
    """A builder's adapters by scope name, with a problem line for each scope it knows of
    but could not build (a folder it may not list, a subscription it may not read).

    A plain dict is a builder answer too (no problems): builders that discover scopes
    return this, and the registry carries its problems into the fleet.
    """

    def __init__(
        self,
        adapters: Mapping[str, CloudAdapter] | None = None,
        problems: Sequence[str] = (),
    ) -> None:
        super().__init__(adapters or {})
        self.problems: list[str] = list(problems)


ScopeBuilder = Callable[[BuildContext], dict[str, CloudAdapter]]
"""``context -> {scope name: adapter}`` (or :class:`ScopeAdapters`, with problems); raises
GpuplanError when the cloud cannot be reached at all (credentials, profile)."""


@dataclass(frozen=True)
class FetchRequest:
    """What ``catalog refresh`` asks one cloud's price fetcher for."""

    regions: tuple[str, ...]
    instance_types: tuple[str, ...]
    shapes: Mapping[str, Offer]
    now: datetime
    progress: Progress
    known: Mapping[tuple[str, str], frozenset[PricingModel]] = field(default_factory=dict)
    """(instance type, region) -> pricing models, as the catalog has them: where a price
    API cannot say what a region sells (GCP SKUs are per family), only these are priced."""


Fetcher = Callable[[FetchRequest], FetchResult]
"""One cloud's price API: quotes for the requested regions and types."""

Discoverer = Callable[[tuple[str, ...], Progress], Discovery]
"""Lists the GPU instance types of the given regions."""

DiscovererSetup = Callable[[Mapping[str, str]], Discoverer | None]
"""The environment -> the cloud's type listing, or None when it is not configured."""

ScopedListing = Callable[[str, tuple[str, ...], str | None, Progress], Discovery]
"""(project or subscription, regions, endpoint or None, progress) -> the listing."""


def scoped_discoverer(
    environ: Mapping[str, str], scope_env: str, endpoint_env: str, listing: ScopedListing
) -> Discoverer | None:
    """The listing of the scope ``scope_env`` names (None when unset), at ``endpoint_env``
    (a cloud whose type listing needs a project or subscription)."""
    scope = environ.get(scope_env)
    if not scope:
        return None
    endpoint = environ.get(endpoint_env) or None
    return lambda regions, progress: listing(scope, regions, endpoint, progress)


CostSources: TypeAlias = Callable[
    ["BaseModel | None", BillSettings, Mapping[str, str]], tuple[list[CostSource], list[str]]
]
"""``(scope section or None, bill settings, environ) -> (cost sources, problem lines)``: the
cloud's bill for ``gpuplan bill`` (a problem line names a setting the bill needs). The SDK
is imported inside the call: the caller turns a missing extra into one line; a source
that cannot be built raises GpuplanError (a problem line, the other clouds still run)."""


class IdMatch(StrEnum):
    """How a metrics source ties a series to an instance: by an id, never by a display name."""

    INSTANCE_ID = "instance id"
    """The series carries the instance id exactly (GCP ``instance_id`` resource label,
    Azure VM resource id)."""
    INSTANCE_OR_VM_ID = "instance id or the VM's platform id"
    """A label holds the instance id or, for Azure, the VM's ``vmId`` (case-insensitive)."""
    INSTANCE_ID_OR_UNIQUE_HOST = "instance id, else a host name unique in the region"
    """The ``InstanceId`` dimension; a series with only a ``host`` belongs to the one
    instance listed with that private DNS name (said in the verdict: ``matched_by``)."""


@dataclass(frozen=True)
class NativeMetrics:
    """A cloud's own monitoring, read by its adapter: the model of the policy's
    ``idle.metrics.<name>`` section (every key with a default: the section is present
    when a policy omits it) and how its series are tied to an instance. The registry
    makes it the metrics source native to the entry's cloud."""

    settings: type[BaseModel]
    matching: IdMatch


NOTHING_SURVEYED = "scope discovered nothing: nothing was surveyed"

_Section = TypeVar("_Section")


def metrics_settings(policy: Policy, provider: Provider, model: type[_Section]) -> _Section:
    """The policy's ``idle.metrics.<provider>``, as the entry's model checked it (its
    defaults when the file omits it)."""
    found = policy.idle.metrics.section(provider.value)
    return found if isinstance(found, model) else model()


def section(context: BuildContext, provider: Provider, model: type[_Section]) -> _Section:
    """The policy's ``scope.<provider>``, as the entry's model checked it (a builder's
    first read); InputError when the policy has none."""
    found = context.policy.scope.section(provider)
    if not isinstance(found, model):
        raise InputError(f"the policy has no scope.{provider.value} section")
    return found


@dataclass(frozen=True)
class CloudEntry:
    """Everything about one cloud that the rest of gpuplan may ask for."""

    provider: Provider
    scopes: ScopeBuilder
    steps: Mapping[Action, StepsOrRefusal]
    """Each acting action -> its steps (:class:`gpuplan.core.lifecycle.actions.Steps`, the cloud API
    calls) or why the cloud refuses it (:class:`~gpuplan.core.lifecycle.actions.Refusal`): the
    cloud's row of :data:`gpuplan.core.lifecycle.actions.ACTIONS`."""
    catalog_file: str
    """The catalog CSV this cloud's offers live in (read and written by that name)."""
    permission_file: str
    """The least-privilege role for the adapter's calls, relative to the repository."""
    regions: RegionNaming | None = None
    """How the cloud names its regions; None only for a stand-in that has no catalog."""
    prices: Fetcher | None = None
    price_source: str = ""
    """The ``source`` column of refreshed offers (the price API's name)."""
    discoverer: DiscovererSetup | None = None
    services: Mapping[Service, str] = field(default_factory=dict)
    """The service behind each kind of call, as ``GPUPLAN_SERVICE_LIMITS`` names it."""
    nothing_found: str = NOTHING_SURVEYED
    """The problem line when the cloud's scope section finds nothing to survey."""
    local_storage: str = "local instance storage"
    """What stop, hibernate or suspend erases here (``policy check`` names it)."""
    scope_section: type[BaseModel] | None = None
    """The model of the policy's ``scope.<name>`` for a cloud that is not built in; its
    builder reads the checked section with ``context.policy.scope.section(provider)``."""
    billing: str = ""
    """How the cloud bills on-demand use (granularity, minimum, commitment)."""
    unsupported: Mapping[Feature, str] = field(default_factory=dict)
    """What gpuplan does not do here, and why (``{feature: reason}``, SkyPilot's shape)."""
    title: str = ""
    """The cloud's name as people write it (``Azure``); empty: the provider's value."""
    cost_sources: CostSources | None = None
    """The cloud's cost sources for ``gpuplan bill``; None: its bill is not read."""
    cost_api: str = ""
    """The cost API's name, for the missing-extra line (``AWS Cost Explorer``)."""
    metrics: NativeMetrics | None = None
    """The cloud's own monitoring (its ``idle.metrics.<name>`` section); None: none, its
    instances' metrics come from a shared source (Prometheus) only."""
    extra: str = ""
    """The pip extra that installs the cloud's SDKs (``pip install 'gpuplan[<extra>]'``)."""
    sdk_modules: tuple[str, ...] = ()
    """The top-level modules that extra installs: a missing one is the extra's line."""
    account_kind: str = ""
    """What the cloud calls the unit an instance is billed to (``account``, ``project``,
    ``subscription``): ``--by account`` groups by it."""
    reservations: str = ""
    """The commitments ``gpuplan savings --policy`` reads through the adapter's
    ``reserved_types()`` to mark savings doubtful (``reserved instances``); empty: none."""
    bill_keys: type[BaseModel] | None = None
    """The model of the cloud's keys in the policy's ``bill`` section (where its bill is
    read: an export, a table; every key with a default), beside the common keys; its
    ``cost_sources`` reads them with ``bill.section(name)``. None: no keys of its own."""
    described: CloudFacts | None = None
    """The cloud's facts module's value (``gpuplan/providers/<cloud>/facts.py``), what the
    shells register before the registry loads; :attr:`facts` is it with the entry's own
    fields (its policy section's model) over it. None: the facts are the entry's fields."""

    @property
    def actions(self) -> dict[Action, str]:
        """Each acting action this cloud carries out -> how (the API calls)."""
        return {a: found.how for a, found in self.steps.items() if isinstance(found, Steps)}

    @property
    def refusals(self) -> dict[Action, str]:
        """Each acting action this cloud refuses -> why (``{feature: reason}``)."""
        return {a: f.reason for a, f in self.steps.items() if isinstance(f, Refusal)}

    def handles(self, action: Action) -> bool:
        """The cloud carries ``action`` out (declared, and not refused)."""
        return action in self.actions and action not in self.refusals

    def refusal(self, action: Action) -> str | None:
        """Why the cloud refuses ``action``; None when it carries it out."""
        if self.handles(action):
            return None
        return self.refusals.get(action, "not an action of this cloud")

    @property
    def facts(self) -> CloudFacts:
        """The facts the loaders and the core read (registered with the entry)."""
        if self.regions is None:
            raise ValueError(f"{self.provider.value}: an entry without region naming")
        if self.described is not None:
            return replace(
                self.described,
                provider=self.provider,
                catalog_file=self.catalog_file,
                regions=self.regions,
                local_storage=self.local_storage,
                scope_section=self.scope_section,
                billing=self.billing,
                unsupported=self.unsupported,
                title=self.title,
            )
        return CloudFacts(
            self.provider,
            self.catalog_file,
            self.regions,
            self.local_storage,
            self.scope_section,
            self.billing,
            self.unsupported,
            self.title,
        )

    @property
    def catalog_only(self) -> bool:
        """Priced and planned, never listed or acted on (no lifecycle adapter)."""
        return Feature.FLEET in self.unsupported


def catalog_entry(
    facts: CloudFacts,
    *,
    prices: Fetcher | None = None,
    price_source: str = "",
) -> CloudEntry:
    """The lean entry of a catalog-only cloud: its facts, its price API (if it has one),
    and every lifecycle feature and acting action refused with the facts' reason."""
    why = facts.unsupported[Feature.FLEET]

    def scopes(context: BuildContext) -> dict[str, CloudAdapter]:
        raise InputError(why)

    return CloudEntry(
        facts.provider,
        scopes,
        steps={action: Refusal(why) for action in ACTING},
        catalog_file=facts.catalog_file,
        permission_file="",
        regions=facts.regions,
        prices=prices,
        price_source=price_source,
        nothing_found=why,
        billing=facts.billing,
        unsupported=facts.unsupported,
        title=facts.title,
        described=facts,
    )
