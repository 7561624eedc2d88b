"""A see-through wrapper around a lifecycle provider, for the Fleet screen.

Two jobs, neither of which changes what the use cases decide or do:

* it keeps the utilisation the survey fetched, so the screen can draw a sparkline
  without a second metrics call (the use case's ``Seen`` does not carry the series);
* it can narrow listing to chosen instance ids, so "stop this one instance" runs the
  use case's whole stop path (plan, re-read, re-check, act, tag, ledger) on one row.

Every other call passes straight through. (For the lead: both belong in the use case
as ``Seen.samples`` and ``run_stop_idle(..., instance_ids=...)``; this wrapper goes away
then.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from gpuplan.core.fleet import Capability, GpuInstance, GpuSamples, InstanceState
from gpuplan.core.offers import Provider
from gpuplan.providers.base import LifecycleProvider


class ScopedProvider:
    """Delegates to ``inner``; records fetched samples; lists only ``only`` when given."""

    def __init__(self, inner: LifecycleProvider, only: frozenset[str] | None = None) -> None:
        self.inner = inner
        self.only = only
        self.samples: dict[str, GpuSamples] = {}

    @property
    def provider(self) -> Provider:
        return self.inner.provider

    @property
    def capabilities(self) -> frozenset[Capability]:
        return self.inner.capabilities

    @property
    def scope(self) -> str:
        return self.inner.scope

    def drain_notices(self) -> list[str]:
        return self.inner.drain_notices()

    def list_instances(self) -> list[GpuInstance]:
        listed = self.inner.list_instances()
        if self.only is None:
            return listed
        return [i for i in listed if i.instance_id in self.only]

    def fetch_utilisation(
        self,
        instances: Sequence[GpuInstance],
        *,
        start: datetime,
        end: datetime,
        period_minutes: int,
    ) -> dict[str, GpuSamples]:
        fetched = self.inner.fetch_utilisation(
            instances, start=start, end=end, period_minutes=period_minutes
        )
        self.samples.update(fetched)
        return fetched

    def refresh(self, instance: GpuInstance) -> GpuInstance:
        return self.inner.refresh(instance)

    def stop(self, instance: GpuInstance, *, hibernate: bool = False) -> InstanceState:
        return self.inner.stop(instance, hibernate=hibernate)

    def terminate(self, instance: GpuInstance) -> InstanceState:
        return self.inner.terminate(instance)

    def tag(self, instance: GpuInstance, tags: Mapping[str, str]) -> None:
        self.inner.tag(instance, tags)

    def untag(self, instance: GpuInstance, keys: Sequence[str]) -> None:
        self.inner.untag(instance, keys)


def busiest_per_period(
    samples: GpuSamples | None, periods: Sequence[datetime]
) -> list[float | None]:
    """For the sparkline: the busiest GPU's percent in each period, None where none reported."""
    out: list[float | None] = []
    for start in periods:
        values = [series[start] for series in (samples or {}).values() if start in series]
        out.append(max(values) if values else None)
    return out
