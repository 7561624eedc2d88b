"""The dollar split of one instance over an audit period.

Per aggregation period (5 minutes or an hour) the instance's cost is assigned:

the period's class is :func:`gpuplan.core.lifecycle.idle_signals.classify_period`, the one
``decide`` and the simulator use, with the policy's ``idle:`` thresholds (without a
policy, the policy schema's defaults):

- no GPU reported: **unknown** (missing metrics are never idle);
- every GPU below ``quiet_percent``, no process holding GPU memory (fullest GPU below
  ``memory_floor_percent``) and a quiet CPU, or quiet GPUs with neither memory nor CPU
  reported (the utilisation-only rule, as ``decide``): **idle** (nothing running);
- otherwise **busy** = cost x mean GPU utilisation (over the instance's GPUs) and
  **waiting** = the rest (a live process paid for while its GPUs wait).

busy + waiting + idle + unknown = paid. Oversized dollars (see :mod:`.rightsize`) overlap
busy and waiting: they say how much of the running time a smaller offer would have saved.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import StrEnum

from gpuplan.core.catalog.offers import PricingModel, Provider
from gpuplan.core.lifecycle.idle_signals import IdleRule, PeriodClass, classify_period

HOURS_PER_MONTH = Decimal(730)


_IDLE_DEFAULTS = IdleRule()


@dataclass(frozen=True)
class AuditRule:
    quiet_percent: float = _IDLE_DEFAULTS.threshold_percent
    """The policy's ``idle.threshold_percent`` (default as in the policy schema)."""
    memory_floor_percent: float = _IDLE_DEFAULTS.gpu_memory_floor_percent
    """The policy's ``idle.gpu_memory_floor_percent``."""
    cpu_quiet_percent: float = _IDLE_DEFAULTS.cpu_busy_percent
    """The policy's ``idle.cpu_busy_percent``."""
    cpu_saturated_percent: float = 85.0
    well_used_percent: float = 60.0
    """Busy share of paid dollars at or above which an instance gets no advice."""
    memory_headroom: float = 0.10
    """A right-sized GPU must hold the observed peak memory plus this share."""
    min_usd_per_month: Decimal = Decimal(10)
    """Advice worth less than this per month is not printed."""

    @classmethod
    def from_idle(cls, rule: IdleRule) -> AuditRule:
        """The audit that reads a policy's ``idle:`` thresholds (one meaning of idle)."""
        return cls(
            quiet_percent=rule.threshold_percent,
            memory_floor_percent=rule.gpu_memory_floor_percent,
            cpu_quiet_percent=rule.cpu_busy_percent,
        )

    @property
    def idle_rule(self) -> IdleRule:
        """The idle thresholds this audit classifies periods with."""
        return replace(
            _IDLE_DEFAULTS,
            threshold_percent=self.quiet_percent,
            gpu_memory_floor_percent=self.memory_floor_percent,
            cpu_busy_percent=self.cpu_quiet_percent,
        )


@dataclass(frozen=True)
class Usage:
    """Aggregated signals of one instance, one entry per period (oldest first)."""

    period_minutes: int
    gpus: Sequence[Sequence[float | None]]
    """Per period: mean utilisation of each GPU reporting (one entry: the busiest GPU only)."""
    memory: Sequence[float | None]
    """Per period: fullest GPU's memory in use, percent of its total (max)."""
    cpu: Sequence[float | None]
    """Per period: instance CPU, percent (mean)."""

    @property
    def per_gpu(self) -> bool:
        return any(len(g) > 1 for g in self.gpus)


@dataclass(frozen=True)
class Subject:
    """What the audit knows about the instance besides its metrics."""

    instance_id: str
    provider: Provider
    region: str
    instance_type: str
    hourly_usd: Decimal
    group: str = ""
    pricing: PricingModel = PricingModel.ON_DEMAND
    gpu_count: int = 1
    restartable: bool = False
    """Labelled as a job that restarts cheaply from checkpoints."""
    account: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    name: str = ""
    """The instance's name where the cloud gives one (shown beside the id)."""
    attributes: Mapping[str, str] = field(default_factory=dict)
    """Provider facts beside the tags: a Kubernetes workload's ``namespace``,
    ``owner_kind``, ``owner_name`` and ``nodes``."""
    refused: str = ""
    """Why stop-idle will not act on it (a DaemonSet, a protected namespace, an opt-out,
    a PodDisruptionBudget); empty when it may."""


class Bucket(StrEnum):
    BUSY = "busy"
    WAITING = "waiting"
    IDLE = "idle"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Split:
    paid: Decimal
    busy: Decimal
    waiting: Decimal
    idle: Decimal
    unknown: Decimal
    running_hours: Decimal
    """Hours classed busy or waiting (something ran)."""
    hours: Decimal
    unknown_after: Decimal = Decimal(0)
    """Unknown dollars after the last period with a GPU report: an instance that finished
    (or was stopped) before the audit period ended."""

    def share(self, amount: Decimal) -> float:
        return float(amount / self.paid) if self.paid else 0.0

    @property
    def busy_share(self) -> float:
        """Busy dollars over the dollars of the time the instance reported or could have
        (a job that finished early is judged on its own days, not the whole period)."""
        basis = self.paid - self.unknown_after
        return float(self.busy / basis) if basis > 0 else 0.0


def period_class(rule: AuditRule, gpus: Sequence[float | None], mem: float | None,
                 cpu: float | None) -> Bucket:  # fmt: skip
    """The audit's bucket of one period, from the shared :func:`classify_period`."""
    known = [g for g in gpus if g is not None]
    kind = classify_period(max(known) if known else None, mem, cpu, rule.idle_rule)
    if kind is PeriodClass.UNKNOWN:
        return Bucket.UNKNOWN
    return Bucket.BUSY if kind.running else Bucket.IDLE


def mean_util(gpus: Sequence[float | None], gpu_count: int) -> float:
    """Mean over the instance's GPUs; with the busiest GPU only, that value (an upper bound)."""
    known = [g for g in gpus if g is not None]
    if len(known) > 1:
        return sum(known) / max(len(known), gpu_count)
    return known[0] if known else 0.0


def split(subject: Subject, usage: Usage, rule: AuditRule) -> Split:
    step = Decimal(usage.period_minutes) / 60
    cost = subject.hourly_usd * step
    busy = waiting = idle = unknown = after = Decimal(0)
    running = 0
    for gpus, mem, cpu in zip(usage.gpus, usage.memory, usage.cpu, strict=True):
        kind = period_class(rule, gpus, mem, cpu)
        after = Decimal(0) if any(g is not None for g in gpus) else after + cost
        if kind == Bucket.UNKNOWN:
            unknown += cost
        elif kind == Bucket.IDLE:
            idle += cost
        else:
            running += 1
            share = Decimal(str(round(mean_util(gpus, subject.gpu_count), 3))) / 100
            busy += cost * share
            waiting += cost * (1 - share)
    periods = len(usage.gpus)
    return Split(
        paid=cost * periods, busy=busy, waiting=waiting, idle=idle, unknown=unknown,
        running_hours=step * running, hours=step * periods, unknown_after=after,
    )  # fmt: skip
