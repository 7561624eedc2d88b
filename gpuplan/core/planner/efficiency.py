"""The MFU model: what fraction of a GPU's dense peak a training job really gets.

MFU (model FLOPs utilisation, Chowdhery et al. 2022) is not one constant. Here it is a
product of factors, each named with its source so ``--explain`` can print it:

    mfu = base(generation) x precision x model scale x in-node link x scale-out
          x expert all-to-all x recomputation

Bases are end-to-end shares fitted to published GPU-hours with leave-one-out
cross-validation (:mod:`gpuplan.core.planner.calibration`, docs/estimating.md), used with
the default goodput (:mod:`gpuplan.core.planner.options`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplan.core.kinds import Precision
from gpuplan.core.planner import calibration as cal

if TYPE_CHECKING:
    from gpuplan.core.gpus import GpuSpec

_SHARE = cal.END_TO_END_SHARE

# End-to-end bf16/fp16 MFU share by architecture (prefix match): fitted for A100 and Hopper
# (gpuplan.core.planner.calibration); the others are assumed steady-state figures scaled
# by the share the fitted ones keep end to end.
_BASES: tuple[tuple[str, float, str], ...] = (
    (
        "Ampere (GA100)",
        cal.BASE_A100,
        "A100: fitted to end-to-end GPU-hours of public runs (LLaMA, Llama 2, OPT, BLOOM, "
        "GLM, Falcon, MPT, Pythia, StarCoder, StableLM, Phi, TinyLlama; cross-validated)",
    ),
    (
        "Hopper",
        cal.BASE_HOPPER,
        "Hopper: fitted to end-to-end GPU-hours of public runs (Llama 3/3.1/4, DeepSeek, "
        "Nemotron-4, Phi-3/4, Granite, Olmo 3, SmolLM3; cross-validated)",
    ),
    (
        "Blackwell",
        0.42 * _SHARE,
        f"assumed 0.42 steady state x {_SHARE:g} end to end; no public run",
    ),
    ("Ampere (GA102)", 0.45 * _SHARE, f"assumed 0.45 x {_SHARE:g} end to end: PCIe Ampere"),
    ("Ada", 0.40 * _SHARE, f"assumed 0.40 x {_SHARE:g} end to end: PCIe Ada; no public run"),
    ("Volta", 0.40 * _SHARE, f"assumed 0.40 x {_SHARE:g} end to end: Megatron-era V100 runs"),
    ("CDNA", 0.35 * _SHARE, f"assumed 0.35 x {_SHARE:g} end to end: MI300X below Hopper"),
    ("Turing", 0.30 * _SHARE, f"assumed 0.30 x {_SHARE:g} end to end: T4 is an inference part"),
    ("Pascal", 0.30 * _SHARE, f"assumed 0.30 x {_SHARE:g} end to end: no tensor cores"),
)
_DEFAULT_BASE = (0.35 * _SHARE, "assumed: GPU generation without a published-run prior")

FP8_SPEEDUP = 1.3
"""FP8 buys ~1.3x over bf16 end to end, not 2x (DOMAIN notes; llm-foundry FP8 tables)."""
_PRECISION_FACTOR = {
    Precision.TF32: (0.9, "TF32 tensor cores: large GEMMs near bf16 efficiency (assumed)"),
    Precision.FP32: (0.7, "FP32 on CUDA cores: no tensor cores, lower reachable share (assumed)"),
}
SCALE_OUT_SLOPE = 0.0
"""MFU lost per doubling of nodes on a fast fabric: none end to end. LLaMA on 256 nodes is
among the most efficient A100 runs in the table; a fitted slope made cross-validation worse."""
SLOW_FABRIC_SLOPE = 0.02
"""Per doubling of nodes when the instance network gives under 25 Gbit/s per GPU."""
SLOW_FABRIC_GBPS_PER_GPU = 25.0
"""Falcon-180B trained well on AWS p4d (50 Gbit/s per GPU); GCP a2's 12.5 is far below."""
ALL_TO_ALL_PER_EXPERT = 0.05
"""Expert parallelism: each token goes to ``top_k`` experts and back (dispatch and combine
all-to-all, GShard, Lepikhin et al. 2020). Time share per routed expert, assumed so that
DeepSeek-V3 (top-8, overlapped by DualPipe, DeepSeek-V3 report Sec 3.2.1) and Llama 4
(top-1 + shared expert) land within the table's spread: factor 1 / (1 + 0.05 k)."""
FULL_RECOMPUTE_FACTOR = 0.75
"""Full recomputation repeats the forward pass: 8ND hardware FLOPs for 6ND model FLOPs."""


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
    for prefix, value, why in _BASES:
        if spec.architecture.startswith(prefix):
            return value, why
    return _DEFAULT_BASE


def estimate_mfu(
    spec: GpuSpec,
    precision: Precision,
    params: float | None,
    cluster: Cluster,
    *,
    moe_top_k: int | None = None,
    full_recompute: bool = False,
    override: float | None = None,
) -> MfuEstimate:
    """MFU for ``spec`` at ``precision`` on ``cluster``; ``override`` replaces the model."""
    if override is not None:
        return MfuEstimate(
            override, (Factor("--mfu", override, "given on the command line"),), True
        )
    value, why = base_mfu(spec)
    factors = [Factor("base (end to end)", value, why)]
    factors.append(_precision_factor(spec, precision))
    if params is not None:
        factors.append(_scale_factor(spec, params))
    factors.append(_link_factor(spec, cluster))
    factors.append(_scale_out_factor(cluster))
    if moe_top_k is not None:
        factors.append(all_to_all_factor(moe_top_k))
    if full_recompute:
        factors.append(Factor("full recomputation", FULL_RECOMPUTE_FACTOR, RECOMPUTE_WHY))
    kept = tuple(f for f in factors if f.value != 1.0 or f.name.startswith("base"))
    return MfuEstimate(math.prod(f.value for f in kept), kept)


def all_to_all_factor(top_k: int) -> Factor:
    """Expert-parallel all-to-all: 1 / (1 + 0.05 x routed experts per token)."""
    value = 1.0 / (1.0 + ALL_TO_ALL_PER_EXPERT * top_k)
    return Factor(
        "expert all-to-all",
        value,
        f"top-{top_k} routing: dispatch + combine all-to-all, "
        f"{ALL_TO_ALL_PER_EXPERT:g} per routed expert (GShard; DeepSeek-V3 Sec 3.2.1)",
    )


RECOMPUTE_WHY = "the forward pass runs twice: 6ND model FLOPs cost 8ND (Korthikanti et al. 2022)"


def _precision_factor(spec: GpuSpec, precision: Precision) -> Factor:
    if precision is Precision.FP8:
        bf16 = spec.peak_tflops(Precision.BF16) or spec.peak_tflops(Precision.FP16)
        fp8 = spec.peak_tflops(Precision.FP8)
        if bf16 and fp8:
            value = FP8_SPEEDUP * bf16 / fp8
            return Factor("fp8", value, f"fp8 runs ~{FP8_SPEEDUP}x bf16, not {fp8 / bf16:.1f}x")
    if precision in _PRECISION_FACTOR:
        value, why = _PRECISION_FACTOR[precision]
        return Factor(precision.value, value, why)
    return Factor(precision.value, 1.0, "the bases are bf16/fp16")


def scale_reference(
    peak_tflops: float,
    *,
    reference: float = cal.SCALE_REFERENCE_PARAMS,
    exponent: float = cal.SCALE_PEAK_EXPONENT,
) -> float:
    """Parameters above which a model fills a GPU of this bf16 peak end to end."""
    return float(reference * (peak_tflops / 312.0) ** exponent)


def model_scale(
    params: float,
    peak_tflops: float,
    *,
    slope: float = cal.SCALE_SLOPE,
    reference: float = cal.SCALE_REFERENCE_PARAMS,
    exponent: float = cal.SCALE_PEAK_EXPONENT,
) -> float:
    """``min(1, (N / N_ref) ** slope)``, floor 0.5; the free constants are parameters so
    scripts/bench_accuracy.py can refit them."""
    ref = scale_reference(peak_tflops, reference=reference, exponent=exponent)
    return 1.0 if params >= ref else max(0.5, (params / ref) ** slope)


def _scale_factor(spec: GpuSpec, params: float) -> Factor:
    """Model scale (total parameters) against a reference that grows with the GPU's peak."""
    peak = spec.peak_tflops(Precision.BF16) or spec.peak_tflops(Precision.FP16) or 312.0
    reference = scale_reference(peak)
    if params >= reference:
        return Factor("model scale", 1.0, "large enough to fill the GPU end to end")
    value = model_scale(params, peak)
    return Factor(
        "model scale",
        value,
        f"(N / {reference / 1e9:,.0f}B)^{cal.SCALE_SLOPE:g}: smaller models keep less of a "
        "fast GPU busy end to end (fitted)",
    )


def _link_factor(spec: GpuSpec, cluster: Cluster) -> Factor:
    if min(cluster.gpus, cluster.gpus_per_node) <= 1:
        return Factor("in-node link", 1.0, "one GPU per node")
    if spec.interconnect_gbs is None:
        return Factor("in-node link", 0.85, f"{spec.interconnect}: gradients cross PCIe")
    if spec.interconnect_gbs < 600:
        return Factor(
            "in-node link", 0.95, f"{spec.interconnect} at {spec.interconnect_gbs:g} GB/s"
        )
    return Factor("in-node link", 1.0, f"{spec.interconnect}")


def _scale_out_factor(cluster: Cluster) -> Factor:
    if cluster.nodes <= 1:
        return Factor("scale-out", 1.0, "one node")
    slope, fabric = SCALE_OUT_SLOPE, "fast fabric assumed"
    if cluster.network_gbps is not None and cluster.gpus_per_node > 0:
        per_gpu = cluster.network_gbps / cluster.gpus_per_node
        fabric = f"{per_gpu:g} Gbit/s per GPU"
        if per_gpu < SLOW_FABRIC_GBPS_PER_GPU:
            slope = SLOW_FABRIC_SLOPE
    doublings = math.log2(cluster.nodes)
    value = max(0.5, 1.0 - slope * doublings)
    return Factor(
        "scale-out", value, f"{cluster.nodes} nodes: -{slope:.1%} per doubling ({fabric})"
    )
