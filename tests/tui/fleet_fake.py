"""The Fleet screen tests' fleet: the shared FakeAdapter with a fixed scope and data.

Every call is recorded by the fake, so tests assert on the exact calls the screen
caused. Utilisation comes from the fake's ``utilisation`` dict, filled here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.instances import (
    Capability,
    GpuInstance,
    HostSamples,
    InstanceState,
    RiskFacts,
)
from gpuplan.providers.fake import FakeAdapter

NOW = datetime.fromisoformat("2026-12-02T12:00:00+00:00")


class LifecycleFake(FakeAdapter):
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


AUDIT_END = NOW.replace(minute=0)
AUDIT_HOURS = [AUDIT_END - timedelta(hours=h) for h in range(7 * 24, 0, -1)]
"""The hourly periods of the default 7-day audit ending at the fixed clock."""


def audit_samples(per_gpu: list[float], memory: float, cpu: float) -> HostSamples:
    """Every hour of the week: each GPU at its utilisation, memory and CPU percent."""
    return HostSamples(
        utilisation={str(g): dict.fromkeys(AUDIT_HOURS, u) for g, u in enumerate(per_gpu)},
        memory={"0": dict.fromkeys(AUDIT_HOURS, memory)},
        cpu=dict.fromkeys(AUDIT_HOURS, cpu),
    )


def audit_fleet() -> LifecycleFake:
    """A week of metrics for a forgotten machine, one busy GPU of eight, an input-bound
    single-GPU job, a well-used trainer and an agent-less instance, all up for a month."""
    month = NOW - timedelta(days=30)
    small = {"instance_type": "g5.xlarge", "gpu": "A10G", "gpu_count": 1,
             "hourly_usd": Decimal("1.006")}  # fmt: skip
    names = {"i-0idle": "forgotten-notebook", "i-0one": "one-of-eight", "i-0feed": "input-bound",
             "i-0busy": "llama-pretrain", "i-0dark": "no-agent"}  # fmt: skip
    instances = [
        gpu_instance(iid, name).model_copy(
            update={"started_at": month, **(small if iid == "i-0feed" else {})}
        )
        for iid, name in names.items()
    ]
    fake = LifecycleFake(instances)
    fake.samples = {
        "i-0idle": audit_samples([0.0] * 8, 0.0, 1.0),
        "i-0one": audit_samples([30.0, *[0.0] * 7], 20.0, 8.0),  # an A100 gives 30% of an H100
        "i-0feed": audit_samples([30.0], 50.0, 95.0),
        "i-0busy": audit_samples([90.0] * 8, 70.0, 40.0),
    }
    return fake
