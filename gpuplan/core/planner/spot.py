"""Spot interruptions: the wall time they add, with the rate stated as an assumption.

Expected extra time = interruptions per hour x (half the checkpoint interval + restart
time) x hours (docs/estimating.md, section 7): on average an interruption loses half an interval
of work plus the time to get capacity back and reload. A gang-scheduled job stops when
any of its instances is reclaimed, so the job's rate is the per-instance rate x nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplan.core.catalog.kinds import Provider

DEFAULT_CHECKPOINT_HOURS = 1.0
RESTART_HOURS = 0.25
"""Get replacement capacity, reload the checkpoint, warm up (assumed)."""

_DATACENTER_GPUS = frozenset({"A100-40GB", "A100-80GB", "H100", "H200", "B200", "GB200", "MI300X"})
_RATES: dict[bool, float] = {True: 0.005, False: 0.002}
"""By scarce (datacenter) GPU or not; the same on every cloud (no cloud publishes rates)."""
RATE_TAKEN = (
    "we take 0.005/instance-hour for A100/H100-class (scarce) pools and 0.002 for smaller GPUs"
)


def rate_source() -> str:
    """Where the assumed rate comes from: no published rate, what the registered clouds
    say of their spot capacity (:attr:`~gpuplan.core.clouds.CloudFacts.spot_evidence`),
    and the rates taken."""
    from gpuplan.core.clouds import facts_of, registered

    said = [facts_of(p).spot_evidence for p in registered() if facts_of(p).spot_evidence]
    return "; ".join(["assumed: no provider publishes hourly rates", *said, RATE_TAKEN])


@dataclass(frozen=True)
class SpotOverhead:
    rate_per_instance_hour: float
    job_rate_per_hour: float
    lost_hours_per_interruption: float
    factor: float
    """Wall time multiplier: 1 + job rate x lost hours per interruption."""


def interruption_rate(provider: Provider, gpu: str) -> float:
    """Assumed interruptions per instance-hour for this GPU family (any provider)."""
    return _RATES[gpu in _DATACENTER_GPUS]


def spot_overhead(
    provider: Provider, gpu: str, nodes: int, checkpoint_hours: float = DEFAULT_CHECKPOINT_HOURS
) -> SpotOverhead:
    rate = interruption_rate(provider, gpu)
    job_rate = rate * nodes
    lost = checkpoint_hours / 2.0 + RESTART_HOURS
    return SpotOverhead(rate, job_rate, lost, 1.0 + job_rate * lost)
