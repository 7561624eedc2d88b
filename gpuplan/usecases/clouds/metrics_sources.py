"""The metrics registry: one entry per metrics source, and the one place that builds the
source a policy names.

A metrics source answers ``fetch_utilisation(instances, start=, end=, period_minutes=)``
with ``instance id -> HostSamples`` (:class:`~gpuplan.core.lifecycle.instances.HostSamples`: GPU
utilisation, GPU memory and instance CPU as declared fields). Each :class:`MetricsEntry`
says, for one source:

- ``name``: its section of the policy, ``idle.metrics.<name>``;
- ``settings``: the pydantic model of that section;
- ``factory``: builds the source from those settings, for a source that serves every
  cloud (:attr:`SourceKind.SHARED`, Prometheus). A cloud's own monitoring
  (:attr:`SourceKind.NATIVE`) has none: the cloud's adapter reads it with its scope's
  client, configured from the same section by the cloud's builder;
- ``matching``: how a series is tied to an instance (:class:`IdMatch`): by an id the
  cloud gave the instance (CloudWatch also by a host name unique in the region), never
  by a display name, so the act path never acts on another machine's metrics.

:func:`shared_source` is what the adapter builder calls (``usecases.adapters``): the
source of the shared entry the policy sets, passed to every adapter; None leaves each
cloud on its own monitoring. A cloud's own monitoring is part of its registry entry
(``CloudEntry.metrics``: the section's model and the matching rule, in the cloud's
package); :func:`native_entries` reads them from the cloud registry, which also makes
each one the policy section ``idle.metrics.<cloud>``. Adding a shared source: its module
(``providers/<name>.py``, with its settings model) and one entry in
:data:`METRICS_ENTRIES`, or :func:`register` at run time; the entry's ``name`` becomes
the policy section ``idle.metrics.<name>`` (docs/architecture.md, "Adding a metrics
source").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.errors import InputError
from gpuplan.core.policy.metrics_settings import (
    MetricsSettings,
    PrometheusMetrics,
    register_section,
    unregister_section,
)
from gpuplan.providers.cloud_entry import IdMatch
from gpuplan.usecases.clouds import registry as cloud_registry

if TYPE_CHECKING:
    from gpuplan.core.policy import Policy
    from gpuplan.providers.base import MetricsSource

Settings = TypeVar("Settings", bound=BaseModel)


class SourceKind(StrEnum):
    NATIVE = "native"
    """A cloud's own monitoring, read by that cloud's adapter (the default)."""
    SHARED = "shared"
    """One source for every cloud of the run, passed to every adapter when set."""


@dataclass(frozen=True)
class MetricsEntry(Generic[Settings]):
    """Everything about one metrics source that the rest of gpuplan may ask for."""

    name: str
    """The policy section ``idle.metrics.<name>``."""
    settings: type[Settings]
    matching: IdMatch
    factory: Callable[[Settings], MetricsSource] | None = None
    """Settings -> the source (a shared source); None for a cloud's own monitoring."""
    native_to: Provider | None = None
    """The cloud whose own monitoring this is; None: any cloud."""

    @property
    def kind(self) -> SourceKind:
        return SourceKind.SHARED if self.factory is not None else SourceKind.NATIVE

    def settings_in(self, policy: Policy) -> Settings | None:
        """This source's section of ``policy`` (None when the policy does not set it)."""
        found = policy.idle.metrics.section(self.name)
        return found if isinstance(found, self.settings) else None


def prometheus_source(settings: PrometheusMetrics) -> MetricsSource:
    """The Prometheus source of ``idle.metrics.prometheus``."""
    from gpuplan.providers.prometheus import PrometheusSource

    return PrometheusSource(
        settings.url,
        metric=settings.metric,
        instance_label=settings.instance_label,
        memory_used_metric=settings.memory_used_metric,
        memory_free_metric=settings.memory_free_metric,
        cpu_metric=settings.cpu_metric,
    )


METRICS_ENTRIES: list[MetricsEntry[Any]] = [
    MetricsEntry(
        "prometheus", PrometheusMetrics, IdMatch.INSTANCE_OR_VM_ID, factory=prometheus_source
    ),
]
"""The metrics sources that are not a cloud's own monitoring (those come with the cloud
registry's entries: :func:`metrics_entries`), in the order :func:`shared_source`
considers them."""


def native_entries() -> list[MetricsEntry[Any]]:
    """Each registered cloud's own monitoring (its entry's ``metrics``), in registry order."""
    return [
        MetricsEntry(e.provider.value, e.metrics.settings, e.metrics.matching, native_to=e.provider)
        for e in cloud_registry.entries()
        if e.metrics is not None
    ]


def metrics_entries() -> list[MetricsEntry[Any]]:
    """Every metrics source: the clouds' own monitoring, then :data:`METRICS_ENTRIES`."""
    return [*native_entries(), *METRICS_ENTRIES]


def register(entry: MetricsEntry[Any]) -> None:
    """Add (or replace) a metrics source: its entry, and its ``idle.metrics.<name>``
    section when that is not a field of the policy schema (present with its defaults
    when the source is native and every key has one)."""
    unregister(entry.name)
    if entry.name not in MetricsSettings.model_fields:
        register_section(entry.name, entry.settings, defaulted=entry.kind is SourceKind.NATIVE)
    METRICS_ENTRIES.append(entry)


def unregister(name: str) -> None:
    """Drop a source registered at run time (a source a test registered)."""
    METRICS_ENTRIES[:] = [e for e in METRICS_ENTRIES if e.name != name]
    if name not in MetricsSettings.model_fields:
        unregister_section(name)


def metrics_entry(name: str) -> MetricsEntry[Any]:
    """The entry called ``name``; KeyError when there is none."""
    for entry in metrics_entries():
        if entry.name == name:
            return entry
    raise KeyError(name)


def native_entry(provider: Provider) -> MetricsEntry[Any]:
    """The cloud's own monitoring; KeyError when the cloud has none registered."""
    for entry in metrics_entries():
        if entry.native_to is provider:
            return entry
    raise KeyError(provider.value)


def shared_source(
    policy: Policy, entries: Sequence[MetricsEntry[Any]] | None = None
) -> MetricsSource | None:
    """The shared source the policy sets, built by its entry; None: each cloud's own
    monitoring. Raises InputError when the policy sets two shared sources."""
    chosen = [
        (entry.name, entry.factory, settings)
        for entry in (metrics_entries() if entries is None else entries)
        if entry.factory is not None and (settings := entry.settings_in(policy)) is not None
    ]
    if not chosen:
        return None
    if len(chosen) > 1:
        names = ", ".join(f"idle.metrics.{name}" for name, _, _ in chosen)
        raise InputError(f"{names}: each serves every cloud; set only one")
    _, factory, settings = chosen[0]
    return factory(settings)
