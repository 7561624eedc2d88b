"""The MFU model: what fraction of a GPU's dense peak a training job really gets.

MFU (model FLOPs utilisation, Chowdhery et al. 2022) is not one constant. Here it is a
product of factors, each named with its source so ``--explain`` can print it:

    mfu = base(generation) x precision x model size x in-node link x scale-out x MoE
          x recomputation

Bases are steady-state bf16 MFU on one 8-GPU node, read off published runs (see
docs/estimating.md for every number and its source). Goodput (restarts, evaluation,
checkpoint stalls) is separate: see :mod:`gpuplan.core.planner.options`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuplan.core.gpus import GpuSpec, Precision

# Steady-state bf16/fp16 MFU on one NVLink node, by architecture (prefix match).
_BASES: tuple[tuple[str, float, str], ...] = (
    (
        "Ampere (GA100)",
        0.60,
        "A100: llm-foundry MPT-7B on 8xA100-80GB 64%, TinyLlama 56% on 16xA100-40GB, "
        "LLaMA-65B ~50% on 2048 GPUs (380 tok/s/GPU)",
    ),
    (
        "Hopper",
        0.49,
        "H100: llm-foundry MPT-7B on 8xH100 46%, 70B on 64xH100 43%; "
        "Llama 3 405B 38-43% on 16K GPUs (Llama 3 paper, Table 4)",
    ),
    ("Blackwell", 0.42, "assumed: no published run in our table; below Hopper as peak doubles"),
    ("Ampere (GA102)", 0.45, "assumed: PCIe Ampere, no published training run in our table"),
    ("Ada", 0.40, "assumed: PCIe Ada, low memory bandwidth per FLOP; no published run"),
    ("Volta", 0.40, "assumed: Megatron-era V100 runs reported 30-45% of fp16 tensor peak"),
    ("CDNA", 0.35, "assumed: MI300X training runs report well under Hopper MFU"),
    ("Turing", 0.30, "assumed: T4 is an inference part (70 W); no published training run"),
    ("Pascal", 0.30, "assumed: no tensor cores"),
)
_DEFAULT_BASE = (0.35, "assumed: GPU generation without a published-run prior")

FP8_SPEEDUP = 1.3
"""FP8 buys ~1.3x over bf16 end to end, not 2x (DOMAIN notes; llm-foundry FP8 tables)."""
_PRECISION_FACTOR = {
    Precision.TF32: (0.9, "TF32 tensor cores: large GEMMs near bf16 efficiency (assumed)"),
    Precision.FP32: (0.7, "FP32 on CUDA cores: no tensor cores, lower reachable share (assumed)"),
}
SIZE_REFERENCE_PARAMS = 1e9
"""Below ~1B parameters on an A100 (scaled by peak for faster GPUs) GEMMs are too small."""
SIZE_SLOPE = 0.2
"""MFU lost per decade below the reference size (assumed; Pythia's sub-billion models ran
below its 1-7B ones on the same code and GPUs, Biderman et al. 2023)."""
SCALE_OUT_SLOPE = 0.015
"""MFU lost per doubling of nodes on a fast fabric (LLaMA 2048 GPUs ~50% vs ~58% on one node;
Llama 3 405B at 2048 nodes ~0.8 of llm-foundry's single node)."""
SLOW_FABRIC_SLOPE = 0.02
"""Per doubling of nodes when the instance network gives under 25 Gbit/s per GPU."""
SLOW_FABRIC_GBPS_PER_GPU = 25.0
"""Falcon-180B trained well on AWS p4d (50 Gbit/s per GPU); GCP a2's 12.5 is far below."""
MOE_FACTOR = 0.8
"""Expert all-to-all and load imbalance (assumed; DeepSeek-V3 needed DualPipe to hide it)."""
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
    moe: bool = False,
    full_recompute: bool = False,
    override: float | None = None,
) -> MfuEstimate:
    """MFU for ``spec`` at ``precision`` on ``cluster``; ``override`` replaces the model."""
    if override is not None:
        return MfuEstimate(
            override, (Factor("--mfu", override, "given on the command line"),), True
        )
    value, why = base_mfu(spec)
    factors = [Factor("base (bf16, one node)", value, why)]
    factors.append(_precision_factor(spec, precision))
    if params is not None:
        factors.append(_size_factor(spec, params))
    factors.append(_link_factor(spec, cluster))
    factors.append(_scale_out_factor(cluster))
    if moe:
        factors.append(Factor("mixture-of-experts", MOE_FACTOR, MOE_FACTOR_WHY))
    if full_recompute:
        factors.append(Factor("full recomputation", FULL_RECOMPUTE_FACTOR, RECOMPUTE_WHY))
    kept = tuple(f for f in factors if f.value != 1.0 or f.name.startswith("base"))
    return MfuEstimate(math.prod(f.value for f in kept), kept)


MOE_FACTOR_WHY = "expert all-to-all and load imbalance (assumed 0.8)"
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


def _size_factor(spec: GpuSpec, params: float) -> Factor:
    peak = spec.peak_tflops(Precision.BF16) or spec.peak_tflops(Precision.FP16) or 312.0
    reference = SIZE_REFERENCE_PARAMS * max(1.0, peak / 312.0)
    if params >= reference:
        return Factor("model size", 1.0, "large enough to fill the GPU")
    value = max(0.5, 1.0 - SIZE_SLOPE * math.log10(reference / params))
    return Factor(
        "model size", value, f"small GEMMs below ~{reference / 1e9:.1f}B params on this GPU"
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
