"""What the planner is asked and what it answers: a request, its options, the result.

Shared by :mod:`gpuplan.core.planner.options` (which builds options) and
:mod:`gpuplan.core.planner.pricing` (which prices them), so neither imports the other
back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from gpuplan.core.catalog.kinds import PricingModel, Provider
from gpuplan.core.planner import calibration as cal
from gpuplan.core.planner.constraints import PlanConstraints
from gpuplan.core.planner.efficiency import Factor
from gpuplan.core.planner.flops import Flops
from gpuplan.core.planner.memory import MemoryEstimate
from gpuplan.core.planner.spot import DEFAULT_CHECKPOINT_HOURS, SpotOverhead
from gpuplan.core.planner.timing import Compute, Throughput
from gpuplan.core.planner.workload import Workload

DEFAULT_GOODPUT = cal.GOODPUT
"""Steady-state / published GPU-hours, median over the public runs (fitted, calibration.py):
what runs lose to restarts, evaluation, checkpoints, data stalls and ramp-up."""


@dataclass(frozen=True)
class PlanRequest:
    workload: Workload
    gpus: tuple[str, ...] = ()
    """Canonical GPU names; empty: every GPU the catalog sells."""
    counts: tuple[float, ...] | None = None
    providers: frozenset[Provider] = frozenset()
    regions: frozenset[str] = frozenset()
    pricing: frozenset[PricingModel] = frozenset()
    mfu: float | None = None
    goodput: float = DEFAULT_GOODPUT
    goodput_given: bool = False
    """The user stated the goodput (``--utilization``): the central figure is the model with
    it, not averaged with the rule of thumb (:mod:`gpuplan.core.planner.central`)."""
    checkpoint_hours: float = DEFAULT_CHECKPOINT_HOURS
    deadline_hours: float | None = None
    budget_usd: Decimal | None = None
    price_per_gpu_hour: Decimal | None = None
    reuse_commitment: bool = False
    throughput: Throughput | None = None
    constraints: PlanConstraints | None = None


@dataclass(frozen=True, slots=True)
class Option:
    """One way to run the job, with its time, cost and why it is (not) feasible."""

    gpu: str
    gpus: float
    nodes: int
    gpus_per_node: float
    provider: Provider | None
    instance_type: str | None
    region: str | None
    pricing: str | None
    compute: Compute | None = None
    hours: float | None = None
    cost_usd: Decimal | None = None
    hourly_usd: Decimal | None = None
    commitment_usd: Decimal | None = None
    break_even_utilization: float | None = None
    spot: SpotOverhead | None = None
    notes: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    pareto: bool = False
    hours_low: float | None = None
    hours_high: float | None = None
    """Range around ``hours`` from the cross-validated residuals (calibration)."""
    cost_usd_low: Decimal | None = None
    cost_usd_high: Decimal | None = None
    spot_outlier: str | None = None
    """Why this option's spot price is far below the same instance elsewhere; None if not."""
    rule_of_thumb_factor: float = 1.0
    """Central figure over the model's time (:mod:`gpuplan.core.planner.central`); 1 where
    the user's goodput, MFU or rate stands alone."""

    @property
    def feasible(self) -> bool:
        return not self.reasons

    @property
    def gpu_hours(self) -> float | None:
        return None if self.hours is None else self.hours * self.gpus

    @property
    def gpu_hours_low(self) -> float | None:
        return None if self.hours_low is None else self.hours_low * self.gpus

    @property
    def gpu_hours_high(self) -> float | None:
        return None if self.hours_high is None else self.hours_high * self.gpus

    @property
    def unused_term_hours(self) -> float | None:
        """Hours of a reserved term the job pays for and does not run in (the whole term is
        charged unless ``--reuse-commitment``); None when nothing is paid unused."""
        paid, hourly = self.commitment_usd, self.hourly_usd
        if paid is None or hourly is None or self.hours is None or hourly <= 0:
            return None
        if self.cost_usd != paid:  # --reuse-commitment: job hours only
            return None
        unused = float(paid / hourly) - self.hours
        return unused if unused > 0.5 else None

    @property
    def mfu(self) -> float | None:
        return None if self.compute is None else self.compute.mfu.mfu

    @property
    def mfu_factors(self) -> tuple[Factor, ...]:
        return () if self.compute is None else self.compute.mfu.factors

    @property
    def memory(self) -> MemoryEstimate | None:
        return None if self.compute is None else self.compute.memory


@dataclass(frozen=True)
class PlanResult:
    workload: Workload
    flops: Flops
    options: tuple[Option, ...]
    """Feasible, ranked (see :mod:`gpuplan.core.planner.ranking`)."""
    infeasible: tuple[Option, ...]
    default_counts: bool
    goodput: float
    notes: tuple[str, ...] = field(default=())
    goodput_given: bool = False
    """The request's ``goodput_given``: no rule of thumb in the central figure."""
    warnings: tuple[str, ...] = field(default=())
    """What the reader must not miss: option 1 resting on a suspect spot price."""
    deadline_hours: float | None = None
    """The request's deadline; without one the default 90-day cap applied."""
    budget_usd: Decimal | None = None
    """The request's budget (``--budget``)."""
