"""Right-sizing: the cheapest catalog offer that fits what an instance really used.

An offer fits when it is sold on demand in the same provider and region, has at least
as many GPUs as the instance kept busy, at least the observed peak GPU memory (plus
headroom) on each GPU, and at least the vCPUs the instance used at its 90th percentile
while running. An offer with a *different* GPU must also give each busy GPU's share of
the dense compute the instance used (mean utilisation over running time x bf16 peak,
fp16 where a GPU has no bf16): the same work on as many GPUs in the same running hours.
A well-used H100 is not "oversized" because an L4 instance with enough memory is
cheaper. Without GPU specs a different GPU never fits.
An offer that does not fit is never returned; the result names its price source and date.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from gpuplan.core.audit.split import (
    AuditRule,
    Bucket,
    Subject,
    Usage,
    mean_util,
    period_class,
)
from gpuplan.core.catalog.gpus import GpuTable, Precision
from gpuplan.core.catalog.offers import Offer, PricingModel
from gpuplan.core.planner.timing import peak_for


@dataclass(frozen=True)
class Need:
    """What the instance used: the floor any replacement must meet."""

    gpus: int
    gpu_memory_gb: float
    vcpus: int
    gpu: str = ""
    """The instance's GPU: an offer with the same one needs no compute comparison."""
    tflops: float | None = None
    """Dense TFLOP/s used per busy GPU: mean utilisation over running time x peak x GPUs,
    over the busy GPUs (the work stays on as many GPUs, each as fast); None when the
    peak is unknown."""


@dataclass(frozen=True)
class Resize:
    offer: Offer
    hourly_usd: Decimal
    need: Need
    source: str
    as_of: date

    def saving(self, current_hourly: Decimal, hours: Decimal) -> Decimal:
        return max(Decimal(0), (current_hourly - self.hourly_usd) * hours)


def current_offer(subject: Subject, offers: Iterable[Offer]) -> Offer | None:
    for offer in offers:
        if (offer.provider, offer.region, offer.instance_type) == (
            subject.provider, subject.region, subject.instance_type,
        ):  # fmt: skip
            return offer
    return None


def busy_gpus(usage: Usage, gpu_count: int, rule: AuditRule) -> int:
    """GPUs that ever reached ``quiet_percent``; all of them without per-GPU data."""
    if not usage.per_gpu:
        return gpu_count
    width = max(len(g) for g in usage.gpus)
    used = 0
    for index in range(width):
        peak = max((g[index] or 0.0 for g in usage.gpus if len(g) > index), default=0.0)
        used += peak >= rule.quiet_percent
    return max(1, used)


def peak_of(gpus: GpuTable | None, name: str) -> float | None:
    """Dense bf16 TFLOP/s of one GPU (the planner's fallback: fp16 where it has no bf16);
    None when the GPU is not in the table."""
    spec = None if gpus is None else gpus.lookup(name)
    return None if spec is None else peak_for(spec, Precision.BF16)[0]


def _p90(values: Sequence[float]) -> float | None:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))] if ordered else None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def need_of(
    usage: Usage, current: Offer, gpu_count: int, rule: AuditRule, gpus: GpuTable | None = None
) -> Need | None:
    memory = [m for m in usage.memory if m is not None]
    if not memory:
        return None
    peak_gb = max(memory) / 100 * current.gpu_memory_gb * (1 + rule.memory_headroom)
    running = [
        i for i, (g, m, c) in enumerate(zip(usage.gpus, usage.memory, usage.cpu, strict=True))
        if c is not None and period_class(rule, g, m, c) == Bucket.BUSY
    ]  # fmt: skip
    cpu = _p90([usage.cpu[i] or 0.0 for i in running])
    vcpus = max(1, math.ceil((100.0 if cpu is None else cpu) / 100 * current.vcpus))
    util = _mean([mean_util(usage.gpus[i], gpu_count) for i in running])
    peak = peak_of(gpus, current.gpu)
    busy = busy_gpus(usage, gpu_count, rule)
    used = None if peak is None else (100.0 if util is None else util) / 100 * peak * gpu_count
    return Need(busy, peak_gb, vcpus, current.gpu, None if used is None else used / busy)


def fits(offer: Offer, need: Need) -> bool:
    """Enough GPUs, GPU memory and vCPUs for what the instance used."""
    return (
        offer.gpu_count >= need.gpus
        and offer.gpu_memory_gb >= need.gpu_memory_gb
        and offer.vcpus >= need.vcpus
    )


def gives_compute(offer: Offer, need: Need, gpus: GpuTable | None) -> bool:
    """The same GPU, or a different one at least as fast as each busy GPU was used."""
    if offer.gpu == need.gpu:
        return True
    peak = peak_of(gpus, offer.gpu)
    return need.tflops is not None and peak is not None and peak >= need.tflops


def cheapest_fit(
    subject: Subject,
    usage: Usage,
    offers: Sequence[Offer],
    rule: AuditRule,
    gpus: GpuTable | None = None,
) -> Resize | None:
    """The cheapest fitting on-demand offer below the instance's price, or None."""
    current = current_offer(subject, offers)
    if current is None:
        return None
    need = need_of(usage, current, subject.gpu_count, rule, gpus)
    if need is None:
        return None
    best: tuple[Decimal, Offer] | None = None
    for offer in offers:
        if (offer.provider, offer.region) != (subject.provider, subject.region):
            continue
        price = offer.price(PricingModel.ON_DEMAND)
        if price is None or price >= subject.hourly_usd:
            continue
        if not (fits(offer, need) and gives_compute(offer, need, gpus)):
            continue
        if best is None or price < best[0]:
            best = (price, offer)
    if best is None:
        return None
    return Resize(best[1], best[0], need, best[1].source, best[1].as_of)
