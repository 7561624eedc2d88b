"""The provider Protocol every cloud adapter (and the in-memory fake) implements."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from gpuplan.core.fleet import Capability, GpuInstance
from gpuplan.core.offers import Provider


@runtime_checkable
class CloudProvider(Protocol):
    """Lists GPU instances in scope. Lifecycle issues extend it with metrics and actions."""

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
