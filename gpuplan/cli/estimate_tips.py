""" "What would fit" after ``estimate`` found nothing: only tips that are true.

A tip the planner offers (8-bit Adam, ZeRO-3, full recompute, more GPUs) is shown only
when the same plan with that one change has a feasible option under the same limits
(``--policy`` included): a tip is checked by planning again, never by reading it. Tips
from options a policy forbids (a GPU outside ``allowed_gpus``) are not offered at all.
Tips that name no change (a GPU with more memory) are passed on as they are. Over a
``--budget``, the cheapest option and how far over it is are said once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from gpuplan.cli.render import format_count

if TYPE_CHECKING:
    from gpuplan.core.planner.options import PlanResult

Change = Mapping[str, Any]
MAX_CHECKS = 6
"""Plans run to check tips (each is one more estimate, ~0.1 s)."""

_FLAG = re.compile(r"\(--(optimizer|zero|recompute|micro-batch|method) ([\w-]+)")
_FINE_TUNE = re.compile(r"--method lora .* or qlora")
"""The fine-tuning tip names two methods: it holds when the lighter one (qlora) fits."""
_MORE_GPUS = re.compile(r"at least (\d+) x (\S+)")


def change_for(tip: str) -> Change | None:
    """The settings a tip asks for, or None when it names no single change."""
    more = _MORE_GPUS.search(tip)
    if more:
        return {"gpus": more.group(1), "gpu": [more.group(2)], "zero": "3", "recompute": "full"}
    if _FINE_TUNE.search(tip):
        return {"method": "qlora"}
    flag = _FLAG.search(tip)
    if flag:
        return {flag.group(1).replace("-", "_"): flag.group(2)}
    return None


def true_tips(
    result: PlanResult, label: str | None, fits: Callable[[Change], bool]
) -> tuple[list[str], int]:
    """Tips that hold, and how many were dropped because they would still not fit."""
    tips: dict[str, None] = {}
    for option in result.infeasible:
        if option.compute is None:
            continue
        if label is not None and any(r.startswith(label) for r in option.reasons):
            continue  # the policy forbids this option whatever it is told to change
        tips.update(dict.fromkeys(option.compute.suggestions))
    kept: list[str] = []
    dropped = checks = 0
    for tip in tips:
        change = change_for(tip)
        if change is None:
            # "8 x g6.xlarge (1 GPU each): g6.48xlarge ... makes 8 GPUs with fewer nodes"
            # says why an instance was passed over; it is no way to make the job fit.
            if "GPU each" not in tip and "GPUs each" not in tip:
                kept.append(tip)
            continue
        checks += 1
        if checks <= MAX_CHECKS and fits(change):
            kept.append(tip)
        else:
            dropped += 1
    return kept, dropped


def cheapest_over_budget(result: PlanResult) -> str | None:
    """The cheapest option left out only for its cost, and how far over ``--budget`` it is
    (of every option over the budget when each has another reason too)."""
    from gpuplan.core.planner.feasibility import OVER_BUDGET

    budget = result.budget_usd
    over = [
        o
        for o in result.infeasible
        if o.cost_usd is not None and any(r.startswith(OVER_BUDGET) for r in o.reasons)
    ]
    if budget is None or not over:
        return None
    only = [o for o in over if len(o.reasons) == 1]
    # A spot price flagged as a dip is ranked at its region's median, not at the dip.
    dependable = [o for o in only or over if not o.spot_outlier]
    best = min(dependable or only or over, key=lambda o: o.cost_usd or Decimal(0))
    cost = best.cost_usd or Decimal(0)
    where = f"{best.nodes} x {best.instance_type}, " if best.instance_type else ""
    provider = best.provider.value if best.provider else "-"
    times = f", {cost / budget:,.1f}x" if budget > 0 else ""
    other = "" if only else " (it has other reasons too)"
    return (
        f"cheapest: {best.gpu} x {format_count(best.gpus)} ({where}{provider}, "
        f"{best.pricing or '-'}) at ${cost:,.0f}, ${cost - budget:,.0f} over the budget of "
        f"${budget:,.0f}{times}{other}"
    )


def fastest_over_cap(result: PlanResult, fits: Callable[[Change], bool]) -> str | None:
    """With no ``--deadline`` and nothing under the default cap: the fastest option kept out
    by time alone, how long it takes, and what would bring it under (more of that GPU,
    checked by planning again, or a ``--deadline`` past its duration)."""
    from gpuplan.core.planner.feasibility import DEFAULT_MAX_HOURS, count_within, only_over_time

    if result.options or result.deadline_hours is not None:
        return None
    over = [o for o in result.infeasible if o.hours is not None and only_over_time(o)]
    if not over:
        return None
    best = min(over, key=lambda o: o.hours or 0.0)
    hours = best.hours or 0.0
    parts = [f"{best.nodes} x {best.instance_type}"] if best.instance_type else []
    parts += [p for p in (best.provider.value if best.provider else None, best.pricing) if p]
    shown = f" ({', '.join(parts)})" if parts else ""
    ways = [f"--deadline {math.ceil(hours / 24)}d lists it"]
    need = count_within(best, hours, DEFAULT_MAX_HOURS)
    step = max(1.0, best.gpus_per_node or 1.0)
    # Time ~ 1 / GPUs is the estimate; a count at the edge can miss by the communication
    # it adds, so the next step up is checked too.
    for count in (need, need + step):
        if fits({"gpus": f"{count:g}", "gpu": [best.gpu]}):
            ways.insert(0, f"--gpu {best.gpu} --gpus {count:g} finishes inside")
            break
    return (
        f"fastest: {best.gpu} x {format_count(best.gpus)}"
        f"{shown} takes {hours / 24:,.1f} days, over "
        f"{DEFAULT_MAX_HOURS / 24:.0f} days; {' or '.join(ways)}"
    )
