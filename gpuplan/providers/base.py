"""The provider Protocols every cloud adapter (and the in-memory fake) implements.

``CloudProvider`` lists GPU instances in scope (enough for ``gpuplan budget``).
``CloudAdapter`` adds what the lifecycle manager needs: utilisation for many
instances in one batch, re-reading one instance right before acting, one ``act`` for
every action (stop, hibernate, suspend, deallocate, terminate) and tags. Each adapter
declares its :class:`~gpuplan.core.lifecycle.instances.Capability` set; the planner checks it before
planning an action, and ``act`` refuses an action it does not handle.

Utilisation comes from a :class:`MetricsSource`: the cloud's own monitoring by default,
or one passed to the adapter's constructor (Prometheus), never a wrapper that would
hide what else the adapter can do. Every metrics read answers ``instance id ->``
:class:`~gpuplan.core.lifecycle.instances.HostSamples`, whose utilisation, GPU memory and CPU are
declared fields (sources: ``usecases.metrics_sources``).

Adapters raise :class:`ProviderError` (a person-readable message, never an SDK
exception) when a call fails after the SDK's own retries, so a use case can report one
region or one instance as failed and carry on with the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.errors import GpuplanError
from gpuplan.core.lifecycle.instances import (
    Action,
    Capability,
    GpuInstance,
    HostSamples,
    InstanceState,
)


class ProviderError(GpuplanError):
    """A cloud call failed (after retries): throttled, denied, unreachable, not found."""

    exit_code = 1


class MetricsSource(Protocol):
    """Where GPU signals come from when it is not the cloud's own monitoring: one batch
    for all ``instances``, ``instance id -> HostSamples``; instances with no series are
    absent from the answer."""

    def fetch_utilisation(
        self,
        instances: Sequence[GpuInstance],
        *,
        start: datetime,
        end: datetime,
        period_minutes: int,
    ) -> dict[str, HostSamples]: ...


@runtime_checkable
class CloudProvider(Protocol):
    """Lists GPU instances in scope."""

    @property
    def provider(self) -> Provider:
        """Which cloud this adapter speaks to."""
        ...

    @property
    def capabilities(self) -> frozenset[Capability]:
        """What this adapter can do."""
        ...

    def list_instances(self) -> list[GpuInstance]:
        """GPU instances in scope, any state, with their labels, start time and price."""
        ...


@runtime_checkable
class CloudAdapter(CloudProvider, Protocol):
    """A provider the lifecycle manager can watch and act on."""

    @property
    def scope(self) -> str:
        """Where this adapter looks, for messages (``aws us-east-1``)."""
        ...

    def drain_notices(self) -> list[str]:
        """Notices gathered since the last call (unknown types...), then forgotten."""
        ...

    def fetch_utilisation(
        self,
        instances: Sequence[GpuInstance],
        *,
        start: datetime,
        end: datetime,
        period_minutes: int,
    ) -> dict[str, HostSamples]:
        """GPU utilisation, GPU memory and CPU per instance id (:class:`HostSamples`).

        ``start`` and ``end`` are aligned to period boundaries by the caller. One batch
        for all instances, never one call per instance. Instances with no series are
        absent from the result (no agent).
        """
        ...

    def refresh(self, instance: GpuInstance) -> GpuInstance:
        """The instance re-read now (state, tags); raises ProviderError when gone."""
        ...

    def act(self, instance: GpuInstance, action: Action) -> InstanceState:
        """Carry out ``action``; returns the state the cloud answered. Raises
        ProviderError when the call fails or the adapter does not handle ``action``."""
        ...

    def tag(self, instance: GpuInstance, tags: Mapping[str, str]) -> None:
        """Set tags (labels) on the instance."""
        ...

    def untag(self, instance: GpuInstance, keys: Sequence[str]) -> None:
        """Remove tags (labels) from the instance; absent keys are fine."""
        ...


@runtime_checkable
class ReservationAware(Protocol):
    """A provider that can say which types have active reservations (AWS): a saving
    from stopping such a type is doubtful, since the reservation bills anyway."""

    @property
    def scope(self) -> str: ...

    @property
    def region(self) -> str: ...

    def reserved_types(self) -> set[str]: ...


def unsupported(scope: str, action: Action) -> ProviderError:
    """The error ``act`` raises for an action this adapter does not handle."""
    return ProviderError(f"{scope}: cannot {action.value} instances")


@runtime_checkable
class Previewer(Protocol):
    """An adapter whose platform has its own dry run (Kubernetes ``dryRun=All``): a dry
    run of ``stop-idle`` sends each would-be action through it, and nothing changes."""

    def preview(self, instance: GpuInstance, action: Action) -> str:
        """What the platform says the action would do; ProviderError when it refuses."""
        ...


@runtime_checkable
class StrandedReporter(Protocol):
    """An adapter whose units share machines (Kubernetes pods on nodes): after a listing,
    the GPUs its machines offer that no unit holds, one record per machine."""

    def stranded_records(self) -> list[dict[str, object]]: ...
