"""Limits imposed from outside the command line, e.g. a team policy file.

The planner treats options that break them as infeasible and names ``label`` in the
reason, so a person sees which rule left an option out and where it came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from gpuplan.core.catalog.kinds import PricingModel

HOURS_PER_MONTH = 730.0
"""An average month (8,760 hours a year / 12)."""


@dataclass(frozen=True)
class PlanConstraints:
    """Empty sets mean 'any'. Names are canonical GPU names and region codes."""

    allowed_gpus: frozenset[str] = frozenset()
    allowed_pricing: frozenset[PricingModel] = frozenset()
    allowed_regions: frozenset[str] = frozenset()
    max_hourly_usd: Decimal | None = None
    """Most the whole option may cost per hour."""
    budget_usd: Decimal | None = None
    """Most the job may cost: all of it, or with ``budget_period_hours`` per period."""
    budget_period_hours: float | None = None
    """The period ``budget_usd`` is for (a month: :data:`HOURS_PER_MONTH`): a job longer
    than that is compared by its cost per period (cost x period / duration); a shorter one
    by its whole cost. None: ``budget_usd`` caps the whole job."""
    budget_name: str = "budget"
    """What ``budget_usd`` is, in the reason: e.g. 'remaining budget this month'."""
    label: str = "constraints"
    """Where the limits came from, e.g. 'policy research-team (policies/x.yaml)'."""

    def violations(
        self,
        *,
        gpu: str,
        pricing: PricingModel | None,
        region: str | None,
        hourly_usd: Decimal | None,
        cost_usd: Decimal | None,
        hours: float | None = None,
    ) -> list[str]:
        """Readable reasons this option breaks the limits (empty when it does not)."""
        out: list[str] = []
        if self.allowed_gpus and gpu not in self.allowed_gpus:
            out.append(f"{self.label}: GPU {gpu} not allowed")
        if self.allowed_pricing and (pricing is None or pricing not in self.allowed_pricing):
            shown = pricing.value if pricing else "custom pricing"
            out.append(f"{self.label}: {shown} not allowed")
        if self.allowed_regions and (region is None or region not in self.allowed_regions):
            out.append(f"{self.label}: region {region or 'unknown'} not allowed")
        if self.max_hourly_usd is not None and (
            hourly_usd is None or hourly_usd > self.max_hourly_usd
        ):
            shown = "unknown" if hourly_usd is None else f"${hourly_usd:,.2f}/h"
            out.append(f"{self.label}: {shown} is over the ${self.max_hourly_usd:,.2f}/h cap")
        out.extend(self._budget_violation(cost_usd, hours))
        return out

    def _budget_violation(self, cost_usd: Decimal | None, hours: float | None) -> list[str]:
        if self.budget_usd is None:
            return []
        period = self.budget_period_hours
        if cost_usd is None:
            return [f"{self.label}: cost unknown; the {self.budget_name} cannot be checked"]
        if period is not None and hours is not None and hours > period:
            share = cost_usd * Decimal(str(round(period / hours, 9)))
            if share <= self.budget_usd:
                return []
            return [
                f"{self.label}: ${share:,.0f} a month (${cost_usd:,.0f} over "
                f"{hours / period:,.1f} months) is over the {self.budget_name} "
                f"(${self.budget_usd:,.2f})"
            ]
        if cost_usd <= self.budget_usd:
            return []
        what = "cost" if period is not None else "whole-job cost"
        return [
            f"{self.label}: {what} ${cost_usd:,.2f} is over the {self.budget_name}"
            f" (${self.budget_usd:,.2f})"
        ]
