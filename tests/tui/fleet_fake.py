"""The Fleet screen tests' fleet: the shared FakeProvider with a fixed scope and data.

Every call is recorded by the fake, so tests assert on the exact calls the screen
caused. Utilisation comes from the fake's ``utilisation`` dict, filled here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal

from gpuplan.core.fleet import Capability, GpuInstance, InstanceState, RiskFacts
from gpuplan.core.offers import Provider
from gpuplan.providers.fake import FakeProvider

NOW = datetime.fromisoformat("2026-12-02T12:00:00+00:00")


class LifecycleFake(FakeProvider):
    """The shared fake with the abilities the Fleet screen uses, on AWS us-east-1."""

    def __init__(self, instances: Sequence[GpuInstance]) -> None:
        super().__init__(
            Provider.AWS,
            instances,
            capabilities=(Capability.LIST, Capability.METRICS, Capability.STOP, Capability.TAG),
        )

    @property
    def scope(self) -> str:
        return "aws us-east-1"


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
        risk=RiskFacts(),
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
