"""The public JSON shape of a plan: ``workload`` and ``options`` (plus ``infeasible``).

Money stays ``Decimal`` here; the renderer turns it into numbers. Keys are stable:
scripts read them.
"""

from __future__ import annotations

from typing import Any

from gpuplan.core.planner.calibration import (
    BAND_CUT_GPUS,
    GOODPUT_SPREAD,
    NARROW_FIRST,
    RANGE_COVERAGE,
    RANGE_COVERAGE_FRESH,
    RANGE_COVERAGE_PUBLISHED,
    RANGE_LABS,
    RANGE_LEVEL,
    RANGE_RUNS,
    RANGE_SOURCE,
    STEADY_STATE_SPREAD,
    band,
)
from gpuplan.core.planner.options import Option, PlanResult


def workload_record(result: PlanResult) -> dict[str, Any]:
    w = result.workload
    shape = w.shape
    setup = w.setup
    record: dict[str, Any] = {
        "params": w.params,
        "active_params": w.active_params,
        "tokens": w.tokens,
        "samples": w.samples,
        "flops_per_sample": w.flops_per_sample,
        "seq_len": shape.seq_len if shape else None,
        "layers": shape.layers if shape else None,
        "hidden": shape.hidden if shape else None,
        "heads": shape.heads if shape else None,
        "vocab": shape.vocab if shape else None,
        "experts": w.experts,
        "top_k": w.routed_experts,
        "inferred": sorted(shape.inferred) if shape else [],
        "precision": setup.precision.value,
        "optimizer": setup.optimizer.value,
        "zero": setup.zero,
        "recompute": setup.recompute.value if setup.recompute else None,
        "micro_batch": setup.micro_batch,
        "global_batch": setup.global_batch,
        "flops_dense": result.flops.dense,
        "flops_attention": result.flops.attention,
        "total_flops": result.flops.total,
        "goodput": result.goodput,
    }
    return record


def option_record(option: Option, rank: int | None = None) -> dict[str, Any]:
    memory = option.memory
    record: dict[str, Any] = {
        "rank": rank,
        "gpu": option.gpu,
        "gpus": _count(option.gpus),
        "nodes": option.nodes,
        "gpus_per_node": option.gpus_per_node,
        "provider": option.provider.value if option.provider else None,
        "instance_type": option.instance_type,
        "region": option.region,
        "pricing": option.pricing,
        "hours": option.hours,
        "hours_low": option.hours_low,
        "hours_high": option.hours_high,
        "days": None if option.hours is None else option.hours / 24.0,
        "gpu_hours": option.gpu_hours,
        "gpu_hours_low": option.gpu_hours_low,
        "gpu_hours_high": option.gpu_hours_high,
        "range_coverage": None if option.hours_low is None else RANGE_COVERAGE,
        "cost_usd": option.cost_usd,
        "cost_usd_low": option.cost_usd_low,
        "cost_usd_high": option.cost_usd_high,
        "hourly_usd": option.hourly_usd,
        "commitment_usd": option.commitment_usd,
        "break_even_utilization": option.break_even_utilization,
        "unused_term_hours": option.unused_term_hours,
        "mfu": option.mfu,
        "mfu_factors": {f.name: round(f.value, 4) for f in option.mfu_factors},
        "rule_of_thumb_factor": round(option.rule_of_thumb_factor, 4),
        "fits_memory": None if memory is None else memory.fits,
        "memory_per_gpu_gib": None if memory is None else round(memory.gib(memory.total), 3),
        "memory": None if memory is None else _memory_record(option),
        "spot": None,
        "pareto": option.pareto,
        "spot_outlier": option.spot_outlier is not None,
        "spot_outlier_reason": option.spot_outlier,
        "notes": list(option.notes),
    }
    if option.spot is not None:
        record["spot"] = {
            "interruptions_per_instance_hour": option.spot.rate_per_instance_hour,
            "interruptions_per_hour": option.spot.job_rate_per_hour,
            "hours_lost_per_interruption": option.spot.lost_hours_per_interruption,
            "wall_time_factor": option.spot.factor,
        }
    if option.reasons:
        record["reasons"] = list(option.reasons)
    return record


def _memory_record(option: Option) -> dict[str, Any]:
    m = option.memory
    assert m is not None
    g = m.gib
    return {
        "weights_gib": round(g(m.weights), 3),
        "gradients_gib": round(g(m.gradients), 3),
        "optimizer_gib": round(g(m.optimizer), 3),
        "activations_gib": round(g(m.activations), 3),
        "logits_gib": round(g(m.logits), 3),
        "overhead_gib": round(g(m.overhead), 3),
        "capacity_gib": round(g(m.capacity), 3),
        "zero": m.plan.zero,
        "recompute": m.plan.recompute.value,
        "recompute_layers": m.plan.recomputed(m.layers),
        "tensor_parallel": m.plan.tensor_parallel,
        "micro_batch": m.plan.micro_batch,
    }


def plan_record(
    result: PlanResult,
    *,
    top: int | None = None,
    assumptions: list[str] | None = None,
    shown: tuple[Option, ...] | None = None,
    every_infeasible: bool = True,
) -> dict[str, Any]:
    """``{"workload", "assumptions", "warnings", "options", "infeasible", ...}``.

    ``shown`` (default: every option, ``top`` of them) are the options listed; without
    ``every_infeasible`` the left-out options are summed up by reason.
    """
    if shown is None:
        shown = result.options if top is None else result.options[:top]
    ranks = {id(o): i + 1 for i, o in enumerate(result.options)}
    record: dict[str, Any] = {
        "workload": workload_record(result),
        "assumptions": assumptions or [],
        "warnings": list(result.warnings),
        "feasible_count": len(result.options),
        "options": [option_record(o, ranks.get(id(o))) for o in shown],
        "infeasible_count": len(result.infeasible),
        "infeasible_reasons": reason_counts(result),
        "range": range_record(measured=_measured(result)),
    }
    if every_infeasible:
        record["infeasible"] = [infeasible_record(o) for o in result.infeasible]
    return record


def _measured(result: PlanResult) -> bool:
    """Whether option 1 rests on the user's own step rate (--throughput --measured-on)."""
    return any(f.name.startswith("measured ") for o in result.options[:1] for f in o.mfu_factors)


def range_record(*, measured: bool = False) -> dict[str, Any]:
    """How the range of every option was calibrated (one band below the GPU-count cut, one
    from it up), and the first way to narrow it (None once the rate is the user's)."""
    low_small, high_small = band(0.0)
    low_large, high_large = band(BAND_CUT_GPUS)
    return {
        "bands": [
            {"gpus_below": BAND_CUT_GPUS, "low_factor": low_small, "high_factor": high_small},
            {"gpus_from": BAND_CUT_GPUS, "low_factor": low_large, "high_factor": high_large},
        ],
        "coverage": RANGE_COVERAGE,
        "coverage_published": RANGE_COVERAGE_PUBLISHED,
        "coverage_fresh": RANGE_COVERAGE_FRESH,
        "runs": RANGE_RUNS,
        "labs": RANGE_LABS,
        "level": RANGE_LEVEL,
        "source": RANGE_SOURCE,
        "parts": [STEADY_STATE_SPREAD, GOODPUT_SPREAD],
        "narrow_first": None if measured else NARROW_FIRST,
    }


def reason_counts(result: PlanResult) -> dict[str, int]:
    """Each reason an option was left out, with how many options it left out."""
    counts: dict[str, int] = {}
    for option in result.infeasible:
        for reason in option.reasons:
            counts[reason] = counts.get(reason, 0) + 1
    return counts


def infeasible_record(option: Option) -> dict[str, Any]:
    """A left-out option: where, how long and how much where known, and why."""
    return {
        "gpu": option.gpu,
        "gpus": _count(option.gpus),
        "nodes": option.nodes,
        "provider": option.provider.value if option.provider else None,
        "instance_type": option.instance_type,
        "region": option.region,
        "pricing": option.pricing,
        "hours": option.hours,
        "cost_usd": option.cost_usd,
        "memory_per_gpu_gib": (
            None if option.memory is None else round(option.memory.gib(option.memory.total), 3)
        ),
        "reasons": list(option.reasons),
        "suggestions": list(option.compute.suggestions) if option.compute else [],
    }


def _count(value: float) -> float | int:
    """Whole GPU counts as integers in JSON; fractions (below 1) stay fractions."""
    return int(value) if float(value).is_integer() else value
