"""The steady-state MFU model: what fraction of a GPU's dense peak a running job keeps.

MFU (model FLOPs utilisation, Chowdhery et al. 2022) once the job runs, as a product of
named factors so ``--explain`` can print them:

    mfu = base x architecture x model width x precision x in-node link x scale-out
          x step synchronisation x expert all-to-all x recomputation x qlora dequantisation

The precision factor of fp8 and fp4 is an Amdahl form: only the large matrix products run
at the low-precision peak (:func:`amdahl_speedup`).

The base and width constants are fitted to framework benchmark tables that run the same
software on several GPU generations (tests/core/planner/anchors/throughput_anchors.csv;
:mod:`gpuplan.core.planner.calibration`), so the model is peak-proportional across
generations: an H100 is ~2.7x an A100 because its dense peak, its measured matmul ceiling
(the spec table's ``bf16_matmul_tflops``) and its memory bandwidth say so, not because of a
constant learned from lab totals. What real runs lose beyond steady state (restarts,
evaluation, checkpoints, ramp-up) is goodput, applied per option
(:mod:`gpuplan.core.planner.options`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplan.core.catalog.kinds import Precision
from gpuplan.core.planner import calibration as cal
from gpuplan.core.planner import comm
from gpuplan.core.planner.workload import Method

if TYPE_CHECKING:
    from gpuplan.core.catalog.gpus import GpuSpec

# What an architecture keeps of the NVIDIA datacenter base (prefix match, first wins).
_ARCHITECTURES: tuple[tuple[str, float, str], ...] = (
    ("Hopper", 1.0, "NVIDIA datacenter tensor cores (the anchors' reference)"),
    ("Blackwell", 1.0, "NVIDIA datacenter tensor cores (the anchors' reference)"),
    ("Ampere (GA100)", 1.0, "NVIDIA datacenter tensor cores (the anchors' reference)"),
    ("Volta", 1.0, "NVIDIA datacenter tensor cores (Megatron-LM V100 runs)"),
    ("CDNA 3", cal.ARCH_CDNA3, "ROCm software stack: MI300X tables reach less of the peak"),
    ("CDNA 2", cal.ARCH_CDNA3, "ROCm software stack, as MI300X (assumed)"),
    ("Ampere (GA102)", 0.8, "PCIe inference part, power-limited clocks (assumed)"),
    ("Ada", 0.7, "PCIe inference part, power-limited clocks (L4: 72 W) (assumed)"),
    ("Turing", 0.6, "T4: inference part, 70 W (assumed)"),
    ("Pascal", 0.5, "no tensor cores (assumed)"),
)
_DEFAULT_ARCH = (0.7, "GPU generation without a benchmark table (assumed)")

_PRECISION_FACTOR = {
    Precision.TF32: (0.9, "TF32 tensor cores: large GEMMs near bf16 efficiency (assumed)"),
    Precision.FP32: (0.7, "FP32 on CUDA cores: no tensor cores, lower reachable share (assumed)"),
}
FORWARD_FLOPS_PER_PARAM = 2.0
"""What full recomputation repeats: one more forward pass."""
QLORA_FACTOR = cal.QLORA_FACTOR
"""QLoRA dequantises every NF4 weight block in the forward and backward passes."""


@dataclass(frozen=True)
class Factor:
    name: str
    value: float
    why: str


@dataclass(frozen=True)
class Cluster:
    """The GPUs an option runs on."""

    gpus: float
    gpus_per_node: float
    nodes: int
    network_gbps: float | None = None
    """Instance network bandwidth, Gbit/s, where the catalog knows it."""


@dataclass(frozen=True)
class MfuEstimate:
    mfu: float
    """Fraction of the dense peak at the training precision."""
    factors: tuple[Factor, ...]
    overridden: bool = False


def base_mfu(spec: GpuSpec) -> tuple[float, str]:
    """Steady-state bf16 MFU of a large dense model on ``spec``: base x architecture."""
    value, why = architecture_factor(spec)
    return cal.STEADY_BASE * value, f"steady-state base {cal.STEADY_BASE:g} x {value:g}: {why}"


def architecture_factor(spec: GpuSpec) -> tuple[float, str]:
    """The GPU's measured matmul ceiling over the H100's, where the spec table has one."""
    peak = spec.peak_tflops(Precision.BF16)
    if spec.bf16_matmul_tflops and peak:
        share = spec.bf16_matmul_tflops / peak
        return share / cal.MATMUL_SHARE_REFERENCE, (
            f"measured matmul ceiling: {share:.0%} of the dense peak against the H100's "
            f"{cal.MATMUL_SHARE_REFERENCE:.0%} (maximum achievable matmul FLOPS)"
        )
    for prefix, value, why in _ARCHITECTURES:
        if spec.architecture.startswith(prefix):
            return value, why
    return _DEFAULT_ARCH


@dataclass(frozen=True)
class JobShape:
    """What the communication and width factors need to know about the model."""

    hidden: int | None = None
    layers: int | None = None
    flops_per_token: float | None = None
    """Model FLOPs per token (the all-to-all is weighed against them)."""
    method: Method = Method.PRETRAIN
    seq_len: int | None = None
    global_batch: int | None = None
    """Sequences per optimizer step; None: the usual batch (:func:`comm.step_tokens_per_gpu`)."""


def estimate_mfu(
    spec: GpuSpec,
    precision: Precision,
    params: float | None,
    cluster: Cluster,
    *,
    moe_top_k: int | None = None,
    recompute_share: float = 0.0,
    override: float | None = None,
    job: JobShape | None = None,
) -> MfuEstimate:
    """Steady-state MFU for ``spec`` at ``precision`` on ``cluster``; ``override`` replaces it.

    ``params`` only matters when ``job`` gives no width: the width is then inferred from it.
    """
    if override is not None:
        return MfuEstimate(
            override, (Factor("--mfu", override, "given on the command line"),), True
        )
    job = job or JobShape()
    arch, why = architecture_factor(spec)
    factors = [
        Factor("base (steady state)", cal.STEADY_BASE, BASE_WHY),
        Factor("architecture", arch, why),
    ]
    hidden = job.hidden if job.hidden is not None else _width_of(params)
    if hidden is not None:
        factors.append(width_factor(hidden))
    factors.append(memory_traffic_factor(spec))
    if hidden is not None:
        factors.append(latency_factor(spec, hidden))
    factors.append(_precision_factor(spec, precision))
    link = comm.links(spec, cluster.gpus_per_node, cluster.network_gbps)
    factors.append(_link_factor(spec, cluster, link))
    size = comm.domain_size(spec, cluster.gpus_per_node)
    factors.append(_scale_out_factor(cluster, link, size))
    factors.append(sync_factor(cluster.gpus, size, job))
    if moe_top_k is not None:
        dense = math.prod(f.value for f in factors)
        factors.append(_a2a_factor(spec, precision, cluster, link, job, moe_top_k, dense))
    if recompute_share > 0:
        factors.append(recompute_factor(job.method, recompute_share))
    if job.method is Method.QLORA:
        factors.append(Factor("qlora dequantisation", QLORA_FACTOR, QLORA_WHY))
    kept = tuple(f for f in factors if f.value != 1.0 or f.name.startswith("base"))
    return MfuEstimate(math.prod(f.value for f in kept), kept)


BASE_WHY = (
    "fitted to framework benchmark tables (Megatron/NeMo, llm-foundry, torchtitan) on A100, "
    "H100, B200 (docs/estimating.md section 4)"
)
QLORA_WHY = "NF4 weights dequantised to bf16 in every forward and backward pass (assumed)"


def width_factor(hidden: int, *, half: float | None = None) -> Factor:
    """``h / (h + WIDTH_HALF)``: narrower models run smaller, less efficient matrix products."""
    half = cal.WIDTH_HALF if half is None else half
    value = hidden / (hidden + half)
    return Factor("model width", value, f"hidden {hidden}: h / (h + {half:g}) (fitted)")


def memory_traffic_factor(spec: GpuSpec, *, share: float | None = None) -> Factor:
    """``1 / (1 + share x (peak / bandwidth) / 300)``: the memory-bound kernels of a step
    (norms, activations, softmax, the optimizer step) take time in proportion to bytes, so a
    GPU whose peak grew faster than its bandwidth keeps less of it; 300 FLOP/byte is the
    H100's bf16 ratio (989 TFLOP/s over 3.35 TB/s)."""
    share = cal.MEMORY_TRAFFIC if share is None else share
    peak = spec.peak_tflops(Precision.BF16) or spec.peak_tflops(Precision.FP16) or 0.0
    ratio = peak / spec.memory_bandwidth_tbs if spec.memory_bandwidth_tbs else 0.0
    value = 1.0 / (1.0 + share * ratio / 300.0)
    return Factor(
        "memory traffic",
        value,
        f"{ratio:.0f} FLOP per byte of memory bandwidth (bf16 peak / {spec.memory_bandwidth_tbs:g}"
        f" TB/s): memory-bound kernels take {share * ratio / 300.0:.0%} of compute time (fitted)",
    )


def latency_factor(spec: GpuSpec, hidden: int) -> Factor:
    """``1 / ((1 - s) + s x r)``: a share ``s`` of a narrow model's step is latency-bound
    (launches, small kernels, optimizer, data) and does not shrink on a GPU ``r`` times
    the H100's matmul-bound speed, so a small model gains less than ``r`` from a faster
    GPU (``s = 1 / (1 + (h / LATENCY_HALF_WIDTH) ** LATENCY_EXPONENT)``; 1 on GPUs no
    faster than the H100, whose small-model runs the fitted model already covers)."""
    share = 1.0 / (1.0 + (hidden / cal.LATENCY_HALF_WIDTH) ** cal.LATENCY_EXPONENT)
    arch, _ = architecture_factor(spec)
    peak = spec.peak_tflops(Precision.BF16) or spec.peak_tflops(Precision.FP16) or 0.0
    speed = peak * arch * memory_traffic_factor(spec).value / cal.REFERENCE_SPEED_TFLOPS
    value = 1.0 / ((1.0 - share) + share * max(1.0, speed))
    return Factor(
        "small-model latency",
        value,
        f"hidden {hidden}: {share:.0%} of a step latency-bound on an H100; this GPU is "
        f"{max(1.0, speed):.2f}x its matmul-bound speed (fitted on MLPerf BERT-large pairs)",
    )


def _width_of(params: float | None) -> int | None:
    if params is None:
        return None
    from gpuplan.core.planner.workload import infer_shape

    return infer_shape(params).hidden


def recompute_factor(method: Method, share: float = 1.0) -> Factor:
    """Model FLOPs / hardware FLOPs when the forward pass of ``share`` of the layers runs
    twice."""
    model = 4.0 if method.frozen_base else 6.0
    extra = FORWARD_FLOPS_PER_PARAM * share
    value = model / (model + extra)
    if share >= 1.0:
        return Factor(
            "full recomputation",
            value,
            f"the forward pass runs twice: {model:g}N model FLOPs cost "
            f"{model + FORWARD_FLOPS_PER_PARAM:g}N (Korthikanti et al. 2022)",
        )
    return Factor(
        "full recomputation",
        value,
        f"the forward pass of {share:.0%} of the layers runs twice (the fewest that fit): "
        f"{model:g}N model FLOPs cost {model + extra:.2f}N (Korthikanti et al. 2022)",
    )


def all_to_all_factor(top_k: int) -> Factor:
    """The expert all-to-all on 64 H100 (8 nodes) of a 4096-wide, 32-layer MoE: for
    callers that know no placement."""
    from gpuplan.core.planner.workload import infer_shape

    shape = infer_shape(7e9)
    job = JobShape(shape.hidden, shape.layers, 6 * 7e9)
    spec_link = comm.Links(comm.REFERENCE_LINK_GBS, comm.REFERENCE_FABRIC_GBIT)
    exposed = comm.all_to_all_exposed(
        top_k=top_k,
        hidden=shape.hidden,
        layers=shape.layers,
        bytes_per_value=2.0,
        seconds_per_token=(job.flops_per_token or 1.0) / (989.4e12 * 0.5),
        gpus=64,
        gpus_per_node=8,
        link=spec_link,
    )
    return Factor("expert all-to-all", 1 / (1 + exposed), f"top-{top_k}")


def _a2a_factor(
    spec: GpuSpec,
    precision: Precision,
    cluster: Cluster,
    link: comm.Links,
    job: JobShape,
    top_k: int,
    dense_mfu: float,
) -> Factor:
    peak = _peak(spec, precision)
    hidden = job.hidden or 4096
    layers = job.layers or 32
    per_token = job.flops_per_token or 6 * 12.0 * layers * hidden * hidden
    seconds = per_token / (peak * 1e12 * dense_mfu)
    # fp8 dispatch, bf16 combine (DeepSeek-V3 Sec 3.3); bf16 both ways otherwise.
    width = 1.5 if precision in (Precision.FP8, Precision.FP4) else 2.0
    exposed = comm.all_to_all_exposed(
        top_k=top_k,
        hidden=hidden,
        layers=layers,
        bytes_per_value=width,
        seconds_per_token=seconds,
        gpus=cluster.gpus,
        gpus_per_node=cluster.gpus_per_node,
        link=link,
    )
    return Factor(
        "expert all-to-all",
        1.0 / (1.0 + exposed),
        f"top-{top_k} dispatch + combine, forward and backward, over "
        f"{link.fabric_gbit:g} Gbit/s per GPU across nodes / {link.link_gbs:g} GB/s in node: "
        f"{exposed:.0%} of compute exposed ({cal.A2A_EXPOSED:g} not overlapped)",
    )


def _peak(spec: GpuSpec, precision: Precision) -> float:
    for candidate in (precision, Precision.BF16, Precision.FP16, Precision.FP32):
        peak = spec.peak_tflops(candidate)
        if peak:
            return peak
    return 1.0


def amdahl_speedup(share: float, ratio: float) -> float:
    """Throughput over bf16 when ``share`` of the bf16 step time runs ``ratio`` times as
    fast and the rest as before (Amdahl 1967): ``1 / ((1 - share) + share / ratio)``."""
    return 1.0 / ((1.0 - share) + share / ratio)


def _gemm_share(precision: Precision) -> float:
    # Read at call time: scripts/fit_steady_state.py refits the constants in place.
    return cal.FP8_GEMM_SHARE if precision is Precision.FP8 else cal.FP4_GEMM_SHARE


def _precision_factor(spec: GpuSpec, precision: Precision) -> Factor:
    if precision in (Precision.FP8, Precision.FP4):
        bf16 = spec.peak_tflops(Precision.BF16) or spec.peak_tflops(Precision.FP16)
        low = spec.peak_tflops(precision)
        if bf16 and low:
            share, ratio = _gemm_share(precision), low / bf16
            speedup = amdahl_speedup(share, ratio)
            name = precision.value
            return Factor(
                f"{name} speed-up / peak ratio (Amdahl)",
                speedup / ratio,
                f"{share:.0%} of a bf16 step runs in {name} matrix products at {ratio:.1f}x "
                f"the bf16 peak: 1 / ({1 - share:.2f} + {share:.2f} / {ratio:.1f}) = "
                f"{speedup:.2f}x bf16, {speedup / ratio:.2f} of the {name} peak "
                "(share fitted: scripts/fit_low_precision.py)",
            )
    if precision in _PRECISION_FACTOR:
        value, why = _PRECISION_FACTOR[precision]
        return Factor(precision.value, value, why)
    return Factor(precision.value, 1.0, "the base is bf16/fp16")


def _link_factor(spec: GpuSpec, cluster: Cluster, link: comm.Links) -> Factor:
    exposed = comm.intra_exposed(cluster.gpus, cluster.gpus_per_node, link)
    if exposed == 0.0:
        return Factor("in-node link", 1.0, "one GPU per node")
    return Factor(
        "in-node link",
        1.0 / (1.0 + exposed),
        f"{spec.interconnect} at {link.link_gbs:g} GB/s: {exposed:.0%} of compute exposed",
    )


def _scale_out_factor(cluster: Cluster, link: comm.Links, size: float) -> Factor:
    count = comm.domains(cluster.gpus, size) if size > cluster.gpus_per_node else cluster.nodes
    exposed = comm.inter_exposed(count, link)
    if exposed == 0.0:
        one = "one node" if size <= cluster.gpus_per_node else "one NVLink domain"
        return Factor("scale-out", 1.0, one)
    where = f"{count} nodes" if size <= cluster.gpus_per_node else f"{count} NVLink domains"
    return Factor(
        "scale-out",
        1.0 / (1.0 + exposed),
        f"{where} at {link.fabric_gbit:g} Gbit/s per GPU: {exposed:.0%} of compute exposed",
    )


def sync_factor(gpus: float, size: float, job: JobShape) -> Factor:
    """``1 / (1 + SYNC_FLOP x (domains - 1) / step FLOPs per GPU)`` for a frozen-base
    fine-tune (LoRA, QLoRA): the collectives that end each optimizer step, across the NVLink
    domains the job spans, against the work one GPU does per step. 1 for methods with
    weight gradients (they hide the collectives), in one domain, or without a sequence
    length or FLOPs per token."""
    count = comm.domains(gpus, size)
    if count <= 1 or not job.method.frozen_base or not job.seq_len or not job.flops_per_token:
        return Factor("step synchronisation", 1.0, "one NVLink domain or weight gradients")
    tokens = comm.step_tokens_per_gpu(gpus, job.seq_len, job.global_batch)
    exposed = comm.sync_exposed(count, tokens * job.flops_per_token)
    batch = "global batch given" if job.global_batch else "usual global batch: --global-batch"
    return Factor(
        "step synchronisation",
        1.0 / (1.0 + exposed),
        f"{count} NVLink domains of {size:g} GPUs, {tokens:,.0f} tokens per GPU per step "
        f"({batch}): {exposed:.0%} of compute exposed (fitted on MLPerf LoRA scaling)",
    )
