"""The arithmetic behind one option, as lines of text a person can check by hand."""

from __future__ import annotations

from gpuplan.core.planner.flops import Flops
from gpuplan.core.planner.memory import MemoryEstimate
from gpuplan.core.planner.options import Option, PlanResult
from gpuplan.core.planner.timing import Compute
from gpuplan.core.planner.workload import Workload
from gpuplan.core.wording import counted


def explain(result: PlanResult, option: Option) -> list[str]:
    """FLOPs, MFU factors, time, goodput, spot, memory and cost of ``option``."""
    lines = _flops_lines(result.workload, result.flops)
    compute = option.compute
    if compute is None:
        return [*lines, "no compute estimate: " + "; ".join(option.reasons)]
    lines.append(
        f"peak: {option.gpu} dense {compute.precision_used.value} = "
        f"{compute.peak_tflops:,.1f} TFLOP/s per GPU (pricing/gpus.toml)"
    )
    lines.append("MFU = " + " x ".join(f"{f.value:.3f} ({f.name})" for f in compute.mfu.factors))
    for f in compute.mfu.factors:
        lines.append(f"  {f.name}: {f.why}")
    lines.append(f"    = {compute.mfu.mfu:.3f}")
    lines.append(
        f"compute time = {result.flops.total:.3e} / ({counted(option.gpus, 'GPU')} x "
        f"{compute.peak_tflops:,.1f}e12 x {compute.mfu.mfu:.3f}) = {compute.compute_hours:,.1f} h"
    )
    wall = compute.compute_hours / result.goodput
    lines.append(
        f"wall time = {compute.compute_hours:,.1f} h / goodput {result.goodput:.2f} = {wall:,.1f} h"
        " (restarts, evaluation, checkpoints, ramp-up: fitted on published runs)"
    )
    lines.extend(_rule_lines(result, compute, wall))
    if option.spot is not None and option.hours is not None:
        s = option.spot
        lines.append(
            f"spot: x (1 + {s.job_rate_per_hour:.3g} interruptions/h x "
            f"{s.lost_hours_per_interruption:g} h lost) = x {s.factor:.3f} -> {option.hours:,.1f} h"
        )
    if option.hours is not None:
        lines.append(
            f"GPU-hours = {option.gpus:g} x {option.hours:,.1f} h = {option.gpu_hours or 0:,.0f}"
        )
    lines.extend(_range_lines(option))
    lines.extend(_cost_lines(option))
    if compute.memory is not None:
        lines.extend(memory_lines(compute.memory))
    lines.extend(f"note: {n}" for n in option.notes)
    return lines


def _rule_lines(result: PlanResult, compute: Compute, wall: float) -> list[str]:
    """The central figure's average with the rule of thumb, where it applies."""
    from gpuplan.core.planner import calibration as cal
    from gpuplan.core.planner.central import central_factor, rule_of_thumb_ratio

    ratio = rule_of_thumb_ratio(compute.mfu, result.flops, cal.GOODPUT)
    if result.goodput_given or ratio is None:
        return []
    factor = central_factor(compute.mfu, result.flops)
    weight = cal.RULE_OF_THUMB_WEIGHT
    return [
        f"central = model^{1 - weight:g} x rule of thumb^{weight:g}: the rule (6ND at "
        f"{cal.RULE_OF_THUMB_PEAK_SHARE:.0%} of peak on this GPU and cluster: no attention "
        f"FLOPs, width or goodput) takes {ratio:.2f}x the model's time, so x {factor:.3f} -> "
        f"{wall * factor:,.1f} h (labs and stacks depart from the model's shape terms; "
        "--utilization, --mfu or --throughput use your figure alone)"
    ]


def _range_lines(option: Option) -> list[str]:
    from gpuplan.core.planner import calibration as cal

    lines = []
    if option.hours_low is not None and option.hours_high is not None:
        low, high = cal.band(option.gpus)
        cut = f"{cal.BAND_CUT_GPUS:g} GPUs"
        side = f"under {cut}" if option.gpus < cal.BAND_CUT_GPUS else f"{cut} and up"
        lines.append(
            f"range = x{low:g} to x{high:g} of the central figure ({side}): "
            f"{option.hours_low:,.1f}-{option.hours_high:,.1f} h, "
            f"{option.gpu_hours_low or 0:,.0f}-{option.gpu_hours_high or 0:,.0f} GPU-h; "
            f"expect about {cal.RANGE_COVERAGE:.0%} of runs inside (of {cal.RANGE_RUNS} public "
            f"runs, each with its lab left out: published {cal.RANGE_COVERAGE_PUBLISHED:.0%}, "
            f"never-fitted {cal.RANGE_COVERAGE_FRESH:.0%} fell inside)"
        )
        lines.append(f"  width: {cal.RANGE_LEVEL:.0%} {cal.RANGE_SOURCE}")
        lines.append(f"  parts: {cal.STEADY_STATE_SPREAD}; {cal.GOODPUT_SPREAD}")
    if option.spot_outlier:
        lines.append(f"spot outlier: {option.spot_outlier}")
    return lines


def _flops_lines(workload: Workload, flops: Flops) -> list[str]:
    if flops.per_token_dense == 0:
        return [f"FLOPs = samples x FLOPs per sample = {flops.total:.3e}"]
    n = workload.compute_params or 0.0
    tokens = workload.tokens or 0.0
    formula = _dense_formula(workload, n)
    lines = [f"FLOPs dense = {formula} x {tokens:.3g} tokens = {flops.dense:.3e}"]
    shape = workload.shape
    if shape is not None:
        guessed = f" (inferred: {', '.join(sorted(shape.inferred))})" if shape.inferred else ""
        lines.append(
            f"FLOPs attention = 12 x {shape.layers} layers x {shape.hidden} width x "
            f"{shape.seq_len} seq x {tokens:.3g} tokens = {flops.attention:.3e}{guessed}"
        )
    lines.append(f"FLOPs total = {flops.total:.3e} (PaLM model FLOPs, no recomputation)")
    return lines


def _dense_formula(workload: Workload, n: float) -> str:
    """``6 x N`` per token, or ``4 x N + 6 x adapters`` when the base is frozen."""
    setup = workload.setup
    if setup.method.frozen_base and workload.shape is not None:
        from gpuplan.core.planner.workload import adapter_params

        adapters = adapter_params(workload.shape, setup.lora_rank)
        return (
            f"(4 x {n:.3g} frozen params + 6 x {adapters:.3g} rank-{setup.lora_rank} "
            "adapter params)"
        )
    return f"6 x {n:.3g} params"


def _cost_lines(option: Option) -> list[str]:
    if option.hourly_usd is None or option.hours is None:
        return ["cost: unknown (no price; give --price-per-gpu-hour)"]
    where = f"{option.nodes} x {option.instance_type}" if option.instance_type else "custom"
    lines = [
        f"hourly = {where} at {option.pricing} = ${option.hourly_usd:,.2f}/h",
    ]
    if option.commitment_usd is not None:
        lines.append(
            f"commitment = term x ${option.hourly_usd:,.2f}/h = ${option.commitment_usd:,.2f}"
        )
        lines.append(f"cost = ${option.cost_usd:,.2f} (what this job adds to the bill)")
    else:
        lines.append(
            f"cost = ${option.hourly_usd:,.2f}/h x {option.hours:,.1f} h = ${option.cost_usd:,.2f}"
        )
    return lines


def memory_lines(memory: MemoryEstimate) -> list[str]:
    g = memory.gib
    plan = memory.plan
    return [
        f"memory per GPU (GiB), ZeRO-{plan.zero}, recompute {memory.recompute_text}, "
        f"tensor parallel {plan.tensor_parallel}, micro-batch {plan.micro_batch}:",
        f"  weights {g(memory.weights):.2f} + gradients {g(memory.gradients):.2f} + "
        f"optimizer {g(memory.optimizer):.2f} + activations {g(memory.activations):.2f} + "
        f"logits {g(memory.logits):.2f} + overhead {g(memory.overhead):.2f} = "
        f"{g(memory.total):.2f} of {g(memory.capacity):.0f} "
        f"({'fits' if memory.fits else 'does not fit'})",
    ]


def assumption_lines(result: PlanResult) -> list[str]:
    """What the numbers rest on, said under the table and in the JSON."""
    from gpuplan.core.planner.feasibility import DEFAULT_MAX_HOURS
    from gpuplan.core.planner.spot import RESTART_HOURS, rate_source

    w = result.workload
    lines = []
    if result.flops.per_token_dense:
        shape = w.shape
        dense = "4ND + adapters" if w.setup.method.frozen_base else "6ND"
        lines.append(
            f"FLOPs {result.flops.total:.3g} = {dense} ({result.flops.dense:.3g}) + attention "
            f"12·L·H·Q·S·D ({result.flops.attention:.3g}); "
            + (
                f"shape inferred from params: {', '.join(sorted(shape.inferred))}"
                if shape and shape.inferred
                else "shape as given"
            )
        )
    lines.append(
        "MFU: steady state fitted to framework benchmark tables (Megatron/NeMo, llm-foundry, "
        "torchtitan) on A100/H100/B200: the dense peak x each GPU's measured matmul ceiling, "
        "x model width, memory traffic, precision, in-node link, scale-out (NVLink domains), "
        "LoRA step synchronisation, expert all-to-all (docs/estimating.md); --mfu overrides"
    )
    lines.append(
        f"goodput {result.goodput:.0%}: steady-state / published GPU-hours of public runs "
        "(restarts, evaluation, checkpoints, ramp-up; --utilization sets it)"
    )
    if not result.goodput_given:
        lines.append(
            "central figure: the model averaged in log space with the rule of thumb 6ND at "
            "40% of peak on the same GPU and cluster (weight 1/2, set a priori; labs left out "
            "it beats 6ND at 40% on each set of public runs, where the model alone did not: "
            "benchmarks/results/central_alternatives.md)"
        )
    lines.append(
        f"spot: interruptions {rate_source()}; each loses half a checkpoint interval + "
        f"{RESTART_HOURS:g} h restart"
    )
    lines.append(
        "reserved: cost is what the job adds to the bill, the whole term unless "
        "--reuse-commitment; commitment and break-even utilisation in the notes"
    )
    if result.default_counts:
        lines.append("GPU counts 1-1024 (powers of two; --gpus changes this)")
    if result.deadline_hours is None:
        days = DEFAULT_MAX_HOURS / 24
        lines.append(f"options over {days:.0f} days left out (--deadline changes this)")
    lines.extend(result.notes)
    return lines
