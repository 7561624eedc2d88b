"""Why an option is (not) feasible: memory, deadline, budget and policy constraints.

Every reason names the GPUs it is about and, for time, how many of them would meet the
limit ("64 x H100 take 40.3 days, past the deadline of 14.0 days; 192 x H100 meet 14.0
days"). Ranking and deadline checks use the central estimate; the range only adds words
("met only at the low end of the range").
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING

from gpuplan.core.catalog.kinds import PricingModel
from gpuplan.core.planner.calibration import band

if TYPE_CHECKING:
    from gpuplan.core.planner.options import Option, PlanRequest
    from gpuplan.core.planner.timing import Compute

DEFAULT_MAX_HOURS = 90 * 24.0
"""Without ``--deadline``, options over 90 days are left out as impractical, whatever the
GPU count: ``--gpus 3`` asks what three GPUs cost, and a 1,400-day answer is a reason (with
the count that would fit), not a plan to rank. ``--deadline`` sets the limit instead."""
_MODELS = frozenset(p.value for p in PricingModel)
OVER_BUDGET = "cost over"
"""How the reason an option costs more than ``--budget`` starts."""


def early_reasons(
    compute: Compute, hours: float, request: PlanRequest, option: Option
) -> list[str]:
    """Reasons that hold whatever the pricing: memory, and time before spot stretches it."""
    reasons: list[str] = []
    memory = compute.memory
    if memory is not None and not memory.fits:
        reasons.append(
            f"memory: {who(option)} needs {memory.gib(memory.total):.1f} GiB per GPU, "
            f"has {memory.gib(memory.capacity):.0f} GiB"
        )
    reasons.extend(_time_reasons(hours, request, option))
    return reasons


def who(option: Option) -> str:
    return f"{option.gpus:g} x {option.gpu}"


def _time_reasons(hours: float, request: PlanRequest, option: Option) -> list[str]:
    limit = request.deadline_hours
    if limit is None:
        limit = DEFAULT_MAX_HOURS
    if hours <= limit:
        return []
    fits = _count_for(option, hours, limit)
    if request.deadline_hours is not None:
        low = hours * band(option.gpus)[0]
        only_low = f" (met only at the low end of the range, {_days(low)})" if low <= limit else ""
        return [
            f"{who(option)} take {_days(hours)}, past the deadline of {_days(limit)}"
            f"{only_low}; {fits} meet {_days(limit)}"
        ]
    return [
        f"{who(option)} take {_days(hours)}: over {_days(limit)} (without --deadline "
        f"longer options are left out); {fits} meet {_days(limit)}"
    ]


def _count_for(option: Option, hours: float, limit: float) -> str:
    return f"{count_within(option, hours, limit):g} x {option.gpu}"


def count_within(option: Option, hours: float, limit: float) -> float:
    """GPUs of this kind that would meet ``limit`` at the same MFU (time ~ 1 / GPUs)."""
    step = max(1.0, option.gpus_per_node or 1.0)
    return float(math.ceil(option.gpus * hours / limit / step) * step)


def only_over_time(option: Option) -> bool:
    """Whether time is all that keeps ``option`` out (no memory, budget or policy reason)."""
    return bool(option.reasons) and all(
        r.startswith(f"{who(option)} take ") for r in option.reasons
    )


def finish(option: Option, request: PlanRequest) -> Option:
    """Attach the reasons an option is infeasible: memory, deadline, budget, constraints."""
    reasons: list[str] = list(option.reasons)
    reasons.extend(_time_reasons(option.hours or 0.0, request, option))
    high = option.hours_high
    deadline = request.deadline_hours
    if not reasons and deadline is not None and high is not None and high > deadline:
        note = (
            "deadline: met at the central estimate, not at the high end of the range "
            f"({_days(high)})"
        )
        option = replace(option, notes=(*option.notes, note))
    if request.budget_usd is not None and (
        option.cost_usd is None or option.cost_usd > request.budget_usd
    ):
        # One wording per budget, so the reasons group; each option's cost is its own field.
        budget = f"the budget of ${request.budget_usd:,.2f}"
        known = option.cost_usd is not None
        reasons.append(f"{OVER_BUDGET} {budget}" if known else f"cost unknown against {budget}")
    if request.constraints is not None:
        pricing = PricingModel(option.pricing) if option.pricing in _MODELS else None
        reasons.extend(
            request.constraints.violations(
                gpu=option.gpu,
                pricing=pricing,
                region=option.region,
                hourly_usd=option.hourly_usd,
                cost_usd=option.cost_usd,
                hours=option.hours,
            )
        )
    if reasons == list(option.reasons):
        return option
    return replace(option, reasons=tuple(reasons))


def _days(hours: float) -> str:
    if hours < 48:
        return f"{hours:,.1f} h"
    return f"{hours / 24:,.1f} days"
