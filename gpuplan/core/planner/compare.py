"""The same job on several GPU generations at one GPU count: time, cost, and why.

``gpuplan estimate ... --compare-gpus`` answers the generation question on one screen: for
each GPU the on-demand option (the fastest price basis that every cloud sells) and the
cheapest feasible option, with what makes the difference: the dense peak, the share of it
the steady-state model keeps (MFU) and the factor that moves most against the first GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from gpuplan.core.planner.options import Option, PlanResult
from gpuplan.core.planner.workload import Recompute

COMPARED_GPUS = ("A100-80GB", "H100", "H200", "B200", "MI300X")
"""The generations people choose between for training (the issue's question)."""
DEFAULT_COMPARE_COUNT = "8"
"""One node of each: the count every one of them is sold in."""


@dataclass(frozen=True)
class Comparison:
    gpu: str
    gpus: float
    hours: float | None
    """Wall time, on demand where sold (no spot interruptions), else the first option."""
    gpu_hours: float | None
    cost_usd: Decimal | None
    """The cheapest feasible option's cost (any pricing model)."""
    cheapest_pricing: str | None
    peak_tflops: float | None
    mfu: float | None
    speedup: float | None
    """Time of the first GPU compared over this one's (same count)."""
    why: str
    reasons: tuple[str, ...] = ()
    """Why nothing is feasible for this GPU (empty when something is)."""


def compare(result: PlanResult, gpus: tuple[str, ...]) -> list[Comparison]:
    """One row per GPU of ``gpus``, in that order, from the plan's options."""
    rows: list[Comparison] = []
    first: Option | None = None
    for gpu in gpus:
        mine = [o for o in result.options if o.gpu == gpu]
        if not mine:
            rows.append(_infeasible(result, gpu))
            continue
        # The fastest on-demand placement: the generation's speed, not a cheaper placement
        # over a slower network (eight 1-GPU marketplace offers without InfiniBand).
        on_demand = [o for o in mine if o.pricing == "on_demand" and o.hours]
        timed = min(on_demand, key=lambda o: o.hours or 0.0) if on_demand else mine[0]
        priced = [o for o in mine if o.cost_usd is not None]
        cheapest = min(priced, key=lambda o: o.cost_usd or Decimal(0)) if priced else None
        first = first or timed
        speedup = (first.hours or 0) / timed.hours if timed.hours else None
        rows.append(
            Comparison(
                gpu,
                timed.gpus,
                timed.hours,
                timed.gpu_hours,
                cheapest.cost_usd if cheapest else None,
                cheapest.pricing if cheapest else None,
                timed.compute.peak_tflops if timed.compute else None,
                timed.mfu,
                speedup,
                _why(timed, first),
            )
        )
    return rows


def _infeasible(result: PlanResult, gpu: str) -> Comparison:
    reasons = tuple(dict.fromkeys(r for o in result.infeasible if o.gpu == gpu for r in o.reasons))
    why = reasons[0] if reasons else f"no {gpu} option matched the filters"
    return Comparison(gpu, 0, None, None, None, None, None, None, None, why, reasons[:3] or (why,))


def _why(option: Option, first: Option) -> str:
    """Peak x MFU, and the factor that differs most from the first GPU's."""
    compute, base = option.compute, first.compute
    if compute is None or base is None:
        return ""
    text = (
        f"{compute.peak_tflops:,.0f} TFLOP/s {compute.precision_used.value} x MFU {option.mfu:.0%}"
    )
    if option is first:
        return text + " (reference)"
    theirs = {f.name: f.value for f in base.mfu.factors}
    moved = [
        (abs(f.value / theirs.get(f.name, 1.0) - 1), f.name, f.value / theirs.get(f.name, 1.0))
        for f in compute.mfu.factors
    ]
    size, name, ratio = max(moved, default=(0.0, "", 1.0))
    if size >= 0.02:
        text += f"; {name} x{ratio:.2f} against {first.gpu}"
    memory = option.memory
    if memory is not None and memory.plan.recompute is Recompute.FULL:
        text += f"; needs recomputation to fit ({memory.recompute_text})"
    return text
