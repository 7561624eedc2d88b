"""Compute time of a placement: peak x MFU (or a measured throughput), and memory fit.

``compute_hours`` is steady-state time: FLOPs / (GPUs x dense peak x MFU). Goodput and
spot interruptions are applied per option by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplan.core.catalog.kinds import Precision
from gpuplan.core.planner.efficiency import (
    Cluster,
    Factor,
    JobShape,
    MfuEstimate,
    estimate_mfu,
)
from gpuplan.core.planner.flops import Flops
from gpuplan.core.planner.memory import (
    MemoryEstimate,
    accumulation_steps,
    choose_plan,
    largest_micro_batch,
    suggestions,
)
from gpuplan.core.planner.workload import Workload

if TYPE_CHECKING:
    from gpuplan.core.catalog.gpus import GpuSpec

MEMORY_BOUND_MFU = 0.15
"""A measured rate under 15% of peak is taken as memory-bound: it scales with bandwidth."""


@dataclass(frozen=True)
class Throughput:
    """A rate measured in a short run: units per second per GPU on ``measured_on``."""

    per_gpu_per_second: float
    measured_on: GpuSpec
    unit: str = "tokens"


@dataclass(frozen=True)
class Compute:
    mfu: MfuEstimate
    peak_tflops: float
    precision_used: Precision
    compute_hours: float
    memory: MemoryEstimate | None
    notes: tuple[str, ...] = ()
    suggestions: tuple[str, ...] = ()


def peak_for(spec: GpuSpec, precision: Precision) -> tuple[float, Precision]:
    """Dense peak at ``precision``, falling back (bf16<->fp16, fp4->fp8->bf16, ->fp32)."""
    fallbacks = {
        Precision.BF16: (Precision.BF16, Precision.FP16, Precision.FP32),
        Precision.FP16: (Precision.FP16, Precision.BF16, Precision.FP32),
        Precision.FP8: (Precision.FP8, Precision.BF16, Precision.FP16, Precision.FP32),
        Precision.FP4: (
            Precision.FP4,
            Precision.FP8,
            Precision.BF16,
            Precision.FP16,
            Precision.FP32,
        ),
        Precision.TF32: (Precision.TF32, Precision.FP32),
        Precision.FP32: (Precision.FP32,),
    }[precision]
    for candidate in fallbacks:
        peak = spec.peak_tflops(candidate)
        if peak:
            return peak, candidate
    return 1.0, precision  # a spec with no figures at all; the table never has one


def compute_for(
    spec: GpuSpec,
    workload: Workload,
    flops: Flops,
    count: float,
    per_node: float,
    nodes: int,
    network_gbps: float | None,
    *,
    mfu_override: float | None = None,
    throughput: Throughput | None = None,
) -> Compute:
    precision = workload.setup.precision
    peak, used = peak_for(spec, precision)
    notes: list[str] = []
    if used is not precision:
        notes.append(f"{spec.name} has no {precision.value} path: {used.value} peak used")
    memory, tips = _memory(spec, workload, count, per_node)
    if memory is not None:
        notes.append(_memory_note(memory, workload, count))
    share = 0.0
    if memory is not None and workload.shape is not None:
        share = memory.plan.recompute_share(workload.shape.layers)
    cluster = Cluster(count, per_node, nodes, network_gbps)
    if throughput is not None:
        mfu = _from_throughput(spec, used, workload, flops, cluster, throughput)
    else:
        mfu = estimate_mfu(
            spec,
            used,
            workload.params if workload.params is not None else workload.compute_params,
            cluster,
            moe_top_k=workload.routed_experts,
            recompute_share=share,
            override=mfu_override,
            job=job_shape(workload, flops),
        )
    seconds = flops.total / (count * peak * 1e12 * mfu.mfu)
    return Compute(mfu, peak, used, seconds / 3600.0, memory, tuple(notes), tuple(tips))


def job_shape(workload: Workload, flops: Flops) -> JobShape:
    shape = workload.shape
    return JobShape(
        hidden=shape.hidden if shape else None,
        layers=shape.layers if shape else None,
        flops_per_token=(flops.per_token_dense + flops.per_token_attention) or None,
        method=workload.setup.method,
        seq_len=shape.seq_len if shape else None,
        global_batch=workload.setup.global_batch,
    )


def _memory(
    spec: GpuSpec, workload: Workload, count: float, per_node: float
) -> tuple[MemoryEstimate | None, list[str]]:
    if workload.params is None or workload.shape is None:
        return None, []
    capacity = spec.memory_gb * min(1.0, count) if count < 1 else spec.memory_gb
    nvlink = spec.interconnect_gbs is not None
    est = choose_plan(workload, workload.shape, count, per_node, capacity, nvlink=nvlink)
    if est.fits:
        return est, []
    return est, suggestions(workload, workload.shape, count, capacity, est, spec.name)


def _memory_note(memory: MemoryEstimate, workload: Workload, count: float) -> str:
    plan = memory.plan
    parts = [f"ZeRO-{plan.zero}", f"recompute {memory.recompute_text}"]
    if plan.tensor_parallel > 1:
        parts.append(f"tensor parallel {plan.tensor_parallel}")
    text = f"memory plan: {', '.join(parts)}, micro-batch {plan.micro_batch}"
    global_batch = workload.setup.global_batch
    if global_batch and memory.fits and workload.shape is not None:
        best = largest_micro_batch(workload, workload.shape, count, memory.capacity / 2**30, plan)
        best = max(1, min(best, global_batch))
        dp = count / plan.tensor_parallel
        steps = accumulation_steps(global_batch, best, dp)
        text += f"; for global batch {global_batch}: micro-batch {best} x {steps} accumulation"
    return text


def _from_throughput(
    spec: GpuSpec,
    precision: Precision,
    workload: Workload,
    flops: Flops,
    cluster: Cluster,
    measured: Throughput,
) -> MfuEstimate:
    """MFU implied by the measurement, moved to ``spec`` and ``cluster`` through the
    steady-state model: the measured MFU times model(target) / model(measured setup).

    The measurement is taken to come from one node of the measured GPU (a short run):
    ``min(8, GPUs)`` GPUs. Below 15% of peak the run is memory-bound: the rate scales with
    memory bandwidth instead, and only the communication factors move."""
    per_unit = flops.per_token_dense + flops.per_token_attention
    if measured.unit == "samples" and workload.flops_per_sample:
        per_unit = workload.flops_per_sample
    ref = measured.measured_on
    ref_peak, _ = peak_for(ref, precision)
    measured_mfu = measured.per_gpu_per_second * per_unit / (ref_peak * 1e12)
    peak, _ = peak_for(spec, precision)
    local = min(cluster.gpus, 8.0)
    ref_cluster = Cluster(local, min(local, max(cluster.gpus_per_node, 1.0)), 1, None)
    job = job_shape(workload, flops)
    top_k = workload.routed_experts
    params = workload.params
    target = estimate_mfu(spec, precision, params, cluster, moe_top_k=top_k, job=job)
    at_ref = estimate_mfu(ref, precision, params, ref_cluster, moe_top_k=top_k, job=job)
    if measured_mfu >= MEMORY_BOUND_MFU:
        ratio = target.mfu / at_ref.mfu
        moved = measured_mfu
        why = (
            f"compute-bound ({measured_mfu:.0%} of {ref.name} peak on {local:g} GPUs): "
            "moved by the steady-state model"
        )
    else:
        rate = measured.per_gpu_per_second * spec.memory_bandwidth_tbs / ref.memory_bandwidth_tbs
        moved = rate * per_unit / (peak * 1e12)
        ratio = _comm(target) / _comm(at_ref)
        why = f"memory-bound ({measured_mfu:.0%} of {ref.name} peak): scaled by bandwidth"
    first = Factor(
        f"measured {measured.per_gpu_per_second:g} {measured.unit}/s/GPU on {ref.name}", moved, why
    )
    transfer = Factor(
        "transfer",
        ratio,
        f"steady-state model on {spec.name} x {cluster.gpus:g} over {ref.name} x {local:g}",
    )
    return MfuEstimate(moved * ratio, (first, transfer))


_COMM = ("in-node link", "scale-out", "step synchronisation", "expert all-to-all")


def _comm(estimate: MfuEstimate) -> float:
    value = 1.0
    for f in estimate.factors:
        if f.name in _COMM:
            value *= f.value
    return value
