"""Ranks feasible options by an objective and marks the Pareto frontier of time vs cost.

An option is on the frontier when no other option is both faster and cheaper (or as
fast and cheaper, or as cheap and faster). Unpriced options rank by time after priced
ones under the cost objective.
"""

from __future__ import annotations

from dataclasses import replace
from enum import StrEnum

from gpuplan.core.catalog import Catalog
from gpuplan.core.planner.options import (
    Option,
    PlanRequest,
    PlanResult,
    enumerate_options,
)
from gpuplan.core.planner.spot_realism import outlier_warning


class Objective(StrEnum):
    COST = "cost"
    TIME = "time"


def sort_key(option: Option, objective: Objective) -> tuple[int, float, float, str]:
    hours = option.hours if option.hours is not None else float("inf")
    cost = float(option.cost_usd) if option.cost_usd is not None else float("inf")
    tie = f"{option.provider or ''}/{option.instance_type or ''}/{option.region or ''}"
    if objective is Objective.TIME:
        return (0, hours, cost, tie)
    return (0 if option.cost_usd is not None else 1, cost, hours, tie)


def pareto_flags(options: list[Option]) -> list[bool]:
    """True for options no other option beats on both time and cost."""
    priced = sorted(
        (i for i, o in enumerate(options) if o.cost_usd is not None and o.hours is not None),
        key=lambda i: (options[i].hours, options[i].cost_usd),
    )
    flags = [False] * len(options)
    best_cost = None
    for i in priced:
        cost = options[i].cost_usd
        if best_cost is None or (cost is not None and cost < best_cost):
            flags[i] = True
            best_cost = cost
    return flags


def rank(options: list[Option], objective: Objective) -> list[Option]:
    """Feasible options, Pareto-marked, in objective order."""
    flags = pareto_flags(options)
    marked = [replace(o, pareto=f) if f else o for o, f in zip(options, flags, strict=True)]
    return sorted(marked, key=lambda o: sort_key(o, objective))


def plan(
    catalog: Catalog, request: PlanRequest, objective: Objective = Objective.COST
) -> PlanResult:
    """Every option for ``request`` on ``catalog``: feasible ones ranked, the rest with reasons."""
    everything, flops = enumerate_options(catalog, request)
    feasible = [o for o in everything if o.feasible]
    infeasible = [o for o in everything if not o.feasible]
    infeasible.sort(key=lambda o: sort_key(o, Objective.TIME))
    ranked = tuple(rank(feasible, objective))
    warning, _ = outlier_warning(ranked)
    return PlanResult(
        workload=request.workload,
        flops=flops,
        options=ranked,
        infeasible=tuple(infeasible),
        default_counts=request.counts is None,
        goodput=request.goodput,
        warnings=() if warning is None else (warning,),
    )
