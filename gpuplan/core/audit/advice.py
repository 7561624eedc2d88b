"""Diagnoses with evidence and dollars per month at stake; none without numbers.

An instance whose busy share of paid dollars reaches ``well_used_percent`` gets no
advice, stop-idle included (except spot, which is about the price of busy time, for a job
labelled restartable); an instance that finished before the period ended is judged on the
dollars up to its last report (:attr:`Split.busy_share`). Every advice carries the figures
it rests on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum

from gpuplan.core.audit.newer import newer_generation
from gpuplan.core.audit.rightsize import Resize, cheapest_fit, current_offer, need_of
from gpuplan.core.audit.split import (
    HOURS_PER_MONTH,
    AuditRule,
    Bucket,
    Split,
    Subject,
    Usage,
    mean_util,
    period_class,
    split,
)
from gpuplan.core.catalog.gpus import GpuTable
from gpuplan.core.catalog.offers import Offer, PricingModel
from gpuplan.core.planner.spot import spot_overhead


class AdviceKind(StrEnum):
    STOP_IDLE = "stop-idle"
    IDLE_REFUSED = "idle-refused"
    """Idle, but stop-idle refuses to act on it (a workload it never touches)."""
    INPUT_BOUND = "input-bound"
    ONE_BUSY_GPU = "one-busy-gpu"
    SMALLER_GPU = "smaller-gpu"
    BURSTY = "bursty-interactive"
    SPOT = "spot-with-checkpoints"
    NEWER_GENERATION = "newer-generation"


@dataclass(frozen=True)
class Advice:
    kind: AdviceKind
    action: str
    evidence: str
    usd_per_month: Decimal


@dataclass(frozen=True)
class InstanceAudit:
    subject: Subject
    split: Split
    resize: Resize | None
    oversized: Decimal
    advice: tuple[Advice, ...] = field(default=())

    @property
    def at_stake_per_month(self) -> Decimal:
        return max((a.usd_per_month for a in self.advice), default=Decimal(0))


def audit_instance(
    subject: Subject, usage: Usage, offers: Sequence[Offer], rule: AuditRule,
    gpus: GpuTable | None = None,
) -> InstanceAudit:  # fmt: skip
    """Split, right-size and diagnose; ``gpus`` enables the newer-generation advice."""
    parts = split(subject, usage, rule)
    resize = cheapest_fit(subject, usage, offers, rule, gpus)
    oversized = resize.saving(subject.hourly_usd, parts.running_hours) if resize else Decimal(0)
    draft = InstanceAudit(subject, parts, resize, oversized)
    drafts = _diagnose(draft, usage, offers, rule)
    if gpus is not None:
        drafts.append(_newer(draft, usage, offers, rule, gpus))
    found = [a for a in drafts if a is not None]
    kept = tuple(a for a in found if a.usd_per_month >= rule.min_usd_per_month)
    return InstanceAudit(subject, parts, resize, oversized, kept)


def _monthly(amount: Decimal, hours: Decimal) -> Decimal:
    return (amount * HOURS_PER_MONTH / hours).quantize(Decimal("0.01")) if hours else Decimal(0)


def _diagnose(
    a: InstanceAudit, usage: Usage, offers: Sequence[Offer], rule: AuditRule
) -> list[Advice | None]:
    if 100 * a.split.busy_share >= rule.well_used_percent:
        return [_spot(a, offers)]
    return [_stop_idle(a), _input_bound(a, usage, rule), _resize_advice(a, usage, offers, rule),
            _bursty(a, usage, rule), _spot(a, offers)]  # fmt: skip


def _stop_idle(a: InstanceAudit) -> Advice | None:
    s = a.split
    if not s.idle or s.share(s.idle) < 0.05:
        return None
    if a.subject.refused:  # stop-idle would refuse it: say why, never suggest it
        return Advice(
            AdviceKind.IDLE_REFUSED,
            f"release it by hand: stop-idle refuses it ({a.subject.refused})",
            f"{s.share(s.idle):.0%} of ${s.paid:,.2f} paid with no GPU work, no GPU memory "
            "held and a quiet CPU",
            _monthly(s.idle, s.hours),
        )
    return Advice(
        AdviceKind.STOP_IDLE,
        "stop it when nothing runs (an idle: policy with stop-idle)",
        f"{s.share(s.idle):.0%} of ${s.paid:,.2f} paid with no GPU work, no GPU memory held "
        "and a quiet CPU",
        _monthly(s.idle, s.hours),
    )


def _running(usage: Usage, rule: AuditRule) -> list[int]:
    return [
        i for i, (g, m, c) in enumerate(zip(usage.gpus, usage.memory, usage.cpu, strict=True))
        if period_class(rule, g, m, c) == Bucket.BUSY
    ]  # fmt: skip


def _input_bound(a: InstanceAudit, usage: Usage, rule: AuditRule) -> Advice | None:
    running = _running(usage, rule)
    starved = [
        i for i in running
        if (usage.cpu[i] or 0) >= rule.cpu_saturated_percent
        and mean_util(usage.gpus[i], a.subject.gpu_count) < 60
    ]  # fmt: skip
    if not running or len(starved) < 0.5 * len(running):
        return None
    step = Decimal(usage.period_minutes) / 60
    waiting = sum(
        (a.subject.hourly_usd * step * (1 - Decimal(str(round(mean_util(usage.gpus[i],
         a.subject.gpu_count), 3))) / 100) for i in starved), Decimal(0),
    )  # fmt: skip
    util = sum(mean_util(usage.gpus[i], a.subject.gpu_count) for i in starved) / len(starved)
    cpu = sum(usage.cpu[i] or 0 for i in starved) / len(starved)
    return Advice(
        AdviceKind.INPUT_BOUND,
        "input-bound: more data-loader workers, faster storage, or a host with more vCPUs per GPU",
        f"in {len(starved) / len(running):.0%} of running time the GPUs averaged {util:.0f}% "
        f"while the CPU was at {cpu:.0f}%",
        _monthly(waiting, a.split.hours),
    )


def _resize_advice(
    a: InstanceAudit, usage: Usage, offers: Sequence[Offer], rule: AuditRule
) -> Advice | None:
    r = a.resize
    if r is None or not a.oversized:
        return None
    fit = (
        f"{r.offer.instance_type} ({r.offer.gpu_count:g}x {r.offer.gpu} "
        f"{r.offer.gpu_memory_gb:g} GB, {r.offer.vcpus} vCPUs) at ${r.hourly_usd}/h "
        f"({r.source}, {r.as_of.isoformat()})"
    )
    current = current_offer(a.subject, offers)
    size = f" of {current.gpu_memory_gb:g} GB" if current else ""
    peak = f"peak GPU memory {r.need.gpu_memory_gb / (1 + rule.memory_headroom):.1f} GB{size}"
    if current is not None and current.gpu != r.offer.gpu and r.need.tflops is not None:
        fit += (
            f"; a different GPU ({current.gpu} -> {r.offer.gpu}) with at least the "
            f"{r.need.tflops:,.0f} TFLOP/s each busy GPU used (mean while running)"
        )
    if a.subject.gpu_count > 1 and r.need.gpus < a.subject.gpu_count and usage.per_gpu:
        return Advice(
            AdviceKind.ONE_BUSY_GPU,
            f"a smaller size: {fit}",
            f"{r.need.gpus} of {a.subject.gpu_count} GPUs ever busy; {peak}; "
            f"{r.need.vcpus} vCPUs used (p90)",
            _monthly(a.oversized, a.split.hours),
        )
    return Advice(
        AdviceKind.SMALLER_GPU,
        f"a smaller GPU (or a shared/fractional one): {fit}",
        f"{peak}; busy {a.split.share(a.split.busy):.0%} of dollars paid; "
        f"{r.need.vcpus} vCPUs used (p90)",
        _monthly(a.oversized, a.split.hours),
    )


def _bursty(a: InstanceAudit, usage: Usage, rule: AuditRule) -> Advice | None:
    running = _running(usage, rule)
    if not running:
        return None
    active = [max((g or 0.0) for g in usage.gpus[i]) >= 20 for i in running]
    bursts = sum(1 for prev, cur in zip([False, *active], active, strict=False) if cur and not prev)
    days = max(Decimal(1) / 24, a.split.running_hours / 24)
    saturated = sum((usage.cpu[i] or 0) >= rule.cpu_saturated_percent for i in running)
    share = sum(active) / len(running)
    if not 0.1 <= share <= 0.7 or bursts / float(days) < 3 or saturated > 0.2 * len(running):
        return None
    return Advice(
        AdviceKind.BURSTY,
        "bursty interactive use: a shared notebook pool or a schedule that stops it off-hours",
        f"GPU active in {share:.0%} of running time, {bursts} bursts over "
        f"{a.split.running_hours:.0f} running hours",
        _monthly(a.split.waiting, a.split.hours),
    )


def _spot(a: InstanceAudit, offers: Sequence[Offer]) -> Advice | None:
    s = a.subject
    if not s.restartable or s.pricing is not PricingModel.ON_DEMAND:
        return None
    offer = current_offer(s, offers)
    spot = offer.price(PricingModel.SPOT) if offer else None
    if offer is None or spot is None:
        return None
    overhead = spot_overhead(s.provider, offer.gpu, 1)
    effective = spot * Decimal(str(round(overhead.factor, 4)))
    saving = (s.hourly_usd - effective) * a.split.running_hours
    if saving <= 0:
        return None
    return Advice(
        AdviceKind.SPOT,
        "spot with checkpoints (labelled restartable)",
        f"spot ${spot}/h x {overhead.factor:.3f} for interruptions "
        f"({overhead.rate_per_instance_hour}/instance-hour, assumed) vs ${s.hourly_usd}/h "
        f"over {a.split.running_hours:.0f} running hours ({offer.source}, {offer.as_of})",
        _monthly(saving, a.split.hours),
    )


def _newer(
    a: InstanceAudit, usage: Usage, offers: Sequence[Offer], rule: AuditRule, gpus: GpuTable
) -> Advice | None:
    s = a.subject
    current = current_offer(s, offers)
    if not s.restartable or current is None:
        return None
    need = need_of(usage, current, s.gpu_count, rule)
    busy_hours = a.split.busy / s.hourly_usd if s.hourly_usd else Decimal(0)
    move = None if need is None else newer_generation(
        current, s.hourly_usd, busy_hours, a.split.running_hours, need, offers, gpus
    )  # fmt: skip
    if move is None:
        return None
    o = move.offer
    return Advice(
        AdviceKind.NEWER_GENERATION,
        f"the same work on {o.instance_type} ({o.gpu_count:g}x {o.gpu}) at ${move.hourly_usd}/h "
        f"({o.source}, {o.as_of})",
        f"{busy_hours:.0f} busy of {a.split.running_hours:.0f} running hours on {current.gpu}; "
        f"planner throughput x{move.speedup:.2f} (bf16 peak x MFU base): "
        f"{move.hours_then:.0f} h for ${move.cost_then:,.0f} instead of "
        f"{move.hours_now:.0f} h for ${move.cost_now:,.0f}",
        _monthly(move.cost_now - move.cost_then, a.split.hours),
    )
