"""Right-sizing: the cheapest catalog offer that fits what an instance really used.

An offer fits when it is sold on demand in the same provider and region, has at least
as many GPUs as the instance kept busy, at least the observed peak GPU memory (plus
headroom) on each GPU, and at least the vCPUs the instance used at its 90th percentile
while running.
An offer that does not fit is never returned; the result names its price source and date.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from gpuplan.core.audit.split import AuditRule, Bucket, Subject, Usage, period_class
from gpuplan.core.offers import Offer, PricingModel


@dataclass(frozen=True)
class Need:
    """What the instance used: the floor any replacement must meet."""

    gpus: int
    gpu_memory_gb: float
    vcpus: int


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


def need_of(usage: Usage, current: Offer, gpu_count: int, rule: AuditRule) -> Need | None:
    memory = [m for m in usage.memory if m is not None]
    if not memory:
        return None
    peak_gb = max(memory) / 100 * current.gpu_memory_gb * (1 + rule.memory_headroom)
    running = [
        c for g, m, c in zip(usage.gpus, usage.memory, usage.cpu, strict=True)
        if c is not None and period_class(rule, g, m, c) == Bucket.BUSY
    ]  # fmt: skip
    cpu = sorted(running)
    p90 = cpu[min(len(cpu) - 1, int(0.9 * len(cpu)))] if cpu else 100.0
    vcpus = max(1, math.ceil(p90 / 100 * current.vcpus))
    return Need(busy_gpus(usage, gpu_count, rule), peak_gb, vcpus)


def fits(offer: Offer, need: Need) -> bool:
    return (
        offer.gpu_count >= need.gpus
        and offer.gpu_memory_gb >= need.gpu_memory_gb
        and offer.vcpus >= need.vcpus
    )


def cheapest_fit(
    subject: Subject, usage: Usage, offers: Sequence[Offer], rule: AuditRule
) -> Resize | None:
    """The cheapest fitting on-demand offer below the instance's price, or None."""
    current = current_offer(subject, offers)
    if current is None:
        return None
    need = need_of(usage, current, subject.gpu_count, rule)
    if need is None:
        return None
    best: tuple[Decimal, Offer] | None = None
    for offer in offers:
        if (offer.provider, offer.region) != (subject.provider, subject.region):
            continue
        price = offer.price(PricingModel.ON_DEMAND)
        if price is None or price >= subject.hourly_usd or not fits(offer, need):
            continue
        if best is None or price < best[0]:
            best = (price, offer)
    if best is None:
        return None
    return Resize(best[1], best[0], need, best[1].source, best[1].as_of)
