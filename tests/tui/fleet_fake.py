"""A lifecycle-capable fake for the Fleet screen tests, built on the shared FakeProvider.

Adds the LifecycleProvider methods as plain operations over ``self.instances``, each
recorded through ``_called`` like the shared fake's own methods, so tests assert on the
exact calls the screen caused. Utilisation comes from a dict the test fills.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from decimal import Decimal

from gpuplan.core.fleet import Capability, GpuInstance, GpuSamples, InstanceState
from gpuplan.core.offers import Provider
from gpuplan.providers.fake import FakeProvider

NOW = datetime.fromisoformat("2026-12-02T12:00:00+00:00")


class LifecycleFake(FakeProvider):
    def __init__(self, instances: Sequence[GpuInstance]) -> None:
        super().__init__(
            Provider.AWS,
            instances,
            capabilities=(Capability.LIST, Capability.METRICS, Capability.STOP, Capability.TAG),
        )
        self.utilisation: dict[str, dict[str, dict[datetime, float]]] = {}

    @property
    def scope(self) -> str:
        return "aws us-east-1"

    def drain_notices(self) -> list[str]:
        return []

    def fetch_utilisation(
        self,
        instances: Sequence[GpuInstance],
        *,
        start: datetime,
        end: datetime,
        period_minutes: int,
    ) -> dict[str, GpuSamples]:
        self._called("fetch_utilisation", tuple(i.instance_id for i in instances))
        return {
            i.instance_id: self.utilisation[i.instance_id]
            for i in instances
            if i.instance_id in self.utilisation
        }

    def refresh(self, instance: GpuInstance) -> GpuInstance:
        self._called("refresh", instance.instance_id)
        return self.instances[instance.instance_id]

    def stop(self, instance: GpuInstance, *, hibernate: bool = False) -> InstanceState:
        self._called("stop", instance.instance_id, hibernate)
        stopped = instance.model_copy(update={"state": InstanceState.STOPPED})
        self.instances[instance.instance_id] = stopped
        return InstanceState.STOPPED

    def terminate(self, instance: GpuInstance) -> InstanceState:
        self._called("terminate", instance.instance_id)
        return InstanceState.TERMINATED

    def tag(self, instance: GpuInstance, tags: Mapping[str, str]) -> None:
        self._called("tag", instance.instance_id, dict(tags))

    def untag(self, instance: GpuInstance, keys: Sequence[str]) -> None:
        self._called("untag", instance.instance_id, tuple(keys))


def gpu_instance(instance_id: str, name: str) -> GpuInstance:
    return GpuInstance(
        provider=Provider.AWS,
        account="123456789012",
        region="us-east-1",
        zone="us-east-1a",
        instance_id=instance_id,
        name=name,
        instance_type="p5.48xlarge",
        state=InstanceState.RUNNING,
        started_at=NOW - timedelta(hours=6),
        gpu="H100",
        gpu_count=8,
        hourly_usd=Decimal("55.04"),
        attributes={"root_device_type": "ebs"},
    )


def flat_samples(
    percent: float, *, gpus: int = 8, hours: int = 2
) -> dict[str, dict[datetime, float]]:
    """Every GPU at ``percent`` in every 5-minute period of the last ``hours``."""
    start = NOW - timedelta(hours=hours)
    periods = [start + timedelta(minutes=5 * k) for k in range(hours * 12)]
    return {
        str(g): {p: percent + (k % 3) * 0.5 for k, p in enumerate(periods)} for g in range(gpus)
    }


def demo_fleet() -> LifecycleFake:
    """One idle, one busy and one agent-less instance."""
    fake = LifecycleFake(
        [
            gpu_instance("i-0idle", "forgotten-notebook"),
            gpu_instance("i-0busy", "llama-pretrain"),
            gpu_instance("i-0dark", "no-agent"),
        ]
    )
    fake.utilisation = {"i-0idle": flat_samples(0.5), "i-0busy": flat_samples(85.0)}
    return fake
