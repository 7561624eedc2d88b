"""Ranks feasible options by an objective and marks the Pareto frontier of time vs cost.

An option is on the frontier when no other option is both faster and cheaper (or as
fast and cheaper, or as cheap and faster). Unpriced options rank by time after priced
ones under the cost objective.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from enum import StrEnum

from gpuplan.core.catalog.query import Catalog
from gpuplan.core.planner.options import (
    Option,
    PlanRequest,
    PlanResult,
    enumerate_options,
)
from gpuplan.core.planner.spot_realism import (
    OutlierKey,
    dependable_spot_factors,
    outlier_warning,
)


class Objective(StrEnum):
    COST = "cost"
    TIME = "time"


Factors = dict[OutlierKey, Decimal]


def _counted_cost(option: Option, factors: Factors) -> Decimal | None:
    """The cost to rank by: a flagged single-zone spot price counts at the median of the
    same instance's spot price elsewhere (:mod:`spot_realism`); every other as listed."""
    if option.cost_usd is None or option.spot_outlier is None or not factors:
        return option.cost_usd
    key = (
        option.provider.value if option.provider else "",
        option.instance_type or "",
        option.region or "",
    )
    return option.cost_usd * factors.get(key, Decimal(1))


def sort_key(
    option: Option, objective: Objective, factors: Factors | None = None
) -> tuple[int, float, float, str]:
    hours = option.hours if option.hours is not None else float("inf")
    counted = _counted_cost(option, factors or {})
    cost = float(counted) if counted is not None else float("inf")
    tie = f"{option.provider or ''}/{option.instance_type or ''}/{option.region or ''}"
    if objective is Objective.TIME:
        return (0, hours, cost, tie)
    return (0 if option.cost_usd is not None else 1, cost, hours, tie)


def pareto_flags(options: list[Option], factors: Factors | None = None) -> list[bool]:
    """True for options no other option beats on both time and cost (the cost to count
    on, as the ranking uses it)."""
    costs = [_counted_cost(o, factors or {}) for o in options]
    priced = sorted(
        (i for i, o in enumerate(options) if costs[i] is not None and o.hours is not None),
        key=lambda i: (options[i].hours, costs[i]),
    )
    flags = [False] * len(options)
    best_cost = None
    for i in priced:
        cost = costs[i]
        if best_cost is None or (cost is not None and cost < best_cost):
            flags[i] = True
            best_cost = cost
    return flags


def rank(
    options: list[Option], objective: Objective, factors: Factors | None = None
) -> list[Option]:
    """Feasible options, Pareto-marked, in objective order; ``factors``: flagged spot
    prices counted at the other regions' median."""
    flags = pareto_flags(options, factors)
    marked = [replace(o, pareto=f) if f else o for o, f in zip(options, flags, strict=True)]
    return sorted(marked, key=lambda o: sort_key(o, objective, factors))


def plan(
    catalog: Catalog, request: PlanRequest, objective: Objective = Objective.COST
) -> PlanResult:
    """Every option for ``request`` on ``catalog``: feasible ones ranked, the rest with reasons."""
    everything, flops = enumerate_options(catalog, request)
    feasible = [o for o in everything if o.feasible]
    infeasible = [o for o in everything if not o.feasible]
    infeasible.sort(key=lambda o: sort_key(o, Objective.TIME))
    ranked = tuple(rank(feasible, objective, dependable_spot_factors(catalog.offers)))
    warning, _ = outlier_warning(ranked)
    return PlanResult(
        workload=request.workload,
        flops=flops,
        options=ranked,
        infeasible=tuple(infeasible),
        default_counts=request.counts is None,
        goodput=request.goodput,
        goodput_given=request.goodput_given,
        warnings=() if warning is None else (warning,),
        deadline_hours=request.deadline_hours,
        budget_usd=request.budget_usd,
    )
