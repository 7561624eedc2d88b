"""The one list of the clouds gpuplan ships: a line per cloud, naming its package.

Each listed package holds two modules:

- ``facts`` (``FACTS``, a :class:`~gpuplan.core.clouds.CloudFacts`): what the loaders, the
  catalog and the planner need (catalog file, region naming, billing note, local-disk
  wording, what it does not support). No SDK and no pydantic: :func:`register_facts`
  imports only these, so ``gpuplan catalog`` and ``gpuplan estimate`` price every listed
  cloud without loading the registry;
- ``entry`` (``ENTRY``, a :class:`~gpuplan.providers.cloud_entry.CloudEntry`): everything
  else (scope builder, actions and refusals, price and cost APIs, service names,
  permission file), built from its facts; :func:`built_in` imports these, for the
  registry (:mod:`gpuplan.usecases.clouds.registry`).

A new in-tree cloud is its package and one line in :data:`CLOUDS` (docs/architecture.md,
"Adding a cloud"). Kubernetes follows the listed clouds: a platform whose GPU workloads
are priced from their nodes' clouds (:mod:`gpuplan.usecases.clouds.kubernetes`).

This module stays light: the standard library and :mod:`gpuplan.core.clouds` only.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any

from gpuplan.core import clouds
from gpuplan.core.catalog.kinds import Provider

if TYPE_CHECKING:
    from gpuplan.core.lifecycle.simulation.traces import PriceList
    from gpuplan.providers.cloud_entry import CloudEntry

CLOUDS: tuple[str, ...] = (
    "gpuplan.providers.aws",
    "gpuplan.providers.gcp",
    "gpuplan.providers.azure",
    "gpuplan.providers.lambdalabs",
    "gpuplan.providers.coreweave",
    "gpuplan.providers.nebius",
    "gpuplan.providers.crusoe",
    "gpuplan.providers.runpod",
    "gpuplan.providers.vastai",
)
"""The built-in clouds, in the order every table lists them: the big three, then the GPU
clouds priced and planned but not managed."""

TRACE_PRICED_AT = ("aws", "us-east-1")
"""Where trace folders' instances (no cloud or region of their own) and the simulator's
seeded fleet are priced: AWS us-east-1 on-demand, else the lowest on-demand price the
catalog has for the type (``gpuplan audit --traces``, ``gpuplan simulate``); as
:class:`~gpuplan.core.lifecycle.simulation.traces.PriceList`: :func:`trace_prices`."""


def register_facts() -> None:
    """Register every listed cloud's facts (its provider defined): the shells call this
    before reading the catalog or a provider name. A cloud already registered keeps its
    facts (its entry's, with its policy section), so repeated calls change nothing."""
    known = {p.value for p in clouds.registered()}
    for package in CLOUDS:
        facts = import_module(f"{package}.facts").FACTS
        if not isinstance(facts, clouds.CloudFacts):
            raise TypeError(f"{package}.facts.FACTS is not CloudFacts")
        if facts.provider.value not in known:
            clouds.register(facts)


@cache
def built_in() -> tuple[CloudEntry, ...]:
    """Every listed cloud's entry, in the list's order, then Kubernetes'."""
    from gpuplan.providers.cloud_entry import CloudEntry
    from gpuplan.usecases.clouds.kubernetes import ENTRY as KUBERNETES

    register_facts()
    found: list[CloudEntry] = []
    for package in CLOUDS:
        entry = import_module(f"{package}.entry").ENTRY
        if not isinstance(entry, CloudEntry):
            raise TypeError(f"{package}.entry.ENTRY is not a CloudEntry")
        found.append(entry)
    return (*found, KUBERNETES)


@cache
def trace_prices() -> PriceList:
    """:data:`TRACE_PRICED_AT` as the simulator's price list (its cloud's facts registered)."""
    from gpuplan.core.lifecycle.simulation.traces import PriceList

    register_facts()
    provider, region = TRACE_PRICED_AT
    return PriceList(Provider(provider), region)


@cache
def fake_entry() -> CloudEntry:
    """The in-memory fake standing in for every cloud (``GPUPLAN_FAKE_FLEET``)."""
    from gpuplan.core.lifecycle.actions import Call, one
    from gpuplan.core.lifecycle.instances import ACTING
    from gpuplan.providers.cloud_entry import FAKE_FLEET_ENV as FAKE_FLEET_ENV
    from gpuplan.providers.cloud_entry import BuildContext, CloudEntry

    def fake_scopes(context: BuildContext) -> dict[str, Any]:
        """Every cloud of the policy from the ``GPUPLAN_FAKE_FLEET`` file, one fake each."""
        from gpuplan.providers.fake import fake_providers

        path = context.environ[FAKE_FLEET_ENV]
        return {f.scope: f for f in fake_providers(path, context.policy.scope.providers)}

    return CloudEntry(
        Provider.named("aws"),
        fake_scopes,
        steps={action: one(Call(action.value), "in memory") for action in ACTING},
        catalog_file="",
        permission_file="",
    )


def __getattr__(name: str) -> Any:
    """``ENTRIES`` and ``FAKE_ENTRY``, built on first use (importing them loads the SDK-free
    half of every cloud package and pydantic)."""
    if name == "ENTRIES":
        return built_in()
    if name == "FAKE_ENTRY":
        return fake_entry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
