"""Memory per GPU for training, and what would fit when it does not.

Model states (mixed-precision Adam): 2 B weights + 2 B gradients + 12 B fp32 master,
momentum and variance = 16 B/parameter (Rajbhandari et al. 2020, ZeRO, Sec 3.1).
ZeRO-1 shards the optimizer state, ZeRO-2 also the gradients, ZeRO-3 / FSDP also the
weights, across the data-parallel GPUs. Activations per layer (Korthikanti et al.
2022, Eq. 2): ``s b h (34 + 5 a s / h)`` bytes; FlashAttention or selective
recomputation drops the ``5 a s / h`` term; full recomputation keeps ``2 s b h`` per
layer plus one layer's working set; tensor parallelism with sequence parallelism
divides both by ``t``. Recomputation can cover only some layers (Megatron-LM's
``--recompute-method block --recompute-num-layers``): the planner recomputes the fewest
layers that make the job fit, and pays for those alone. fp32 logits ``4 s b V``.
Overhead: CUDA/NCCL context plus fragmentation. Sizes are GiB (2^30 bytes), as
``nvidia-smi`` counts them.

LoRA / QLoRA (a frozen base): the base weights are kept in bf16 (2 B/param) or 4-bit NF4
with double-quantised block constants (4.127 bits = 0.516 B/param, Dettmers et al. 2023,
QLoRA Sec 3), with no gradients or optimizer state; the adapters carry the full 16 B/param
of mixed-precision Adam. Activations are those of full training: the backward pass still
runs through every frozen layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuplan.core.catalog.kinds import Precision
from gpuplan.core.planner.workload import (
    Method,
    Optimizer,
    Recompute,
    Shape,
    Workload,
    adapter_params,
)

GIB = float(2**30)
CONTEXT_BYTES = 1.0 * GIB
"""CUDA context, NCCL buffers, cuBLAS workspace (typically 1-2 GB; docs/estimating.md,
section 6)."""
NF4_BYTES = 4.127 / 8
"""4-bit NormalFloat weights plus double-quantised block constants (QLoRA Sec 3: 0.127
bits per parameter for the constants)."""
FRAGMENTATION = 0.05
"""Allocator fragmentation on top of what is live (up to ~10% in practice;
docs/estimating.md, section 6)."""


def bytes_per_param(precision: Precision, optimizer: Optimizer) -> tuple[float, float, float]:
    """(weights, gradients, optimizer state) bytes per parameter.

    fp8 and fp4 count as bf16 mixed precision: their recipes quantise the inputs of the
    matrix products on the fly and keep the main weights, weight gradients and optimizer
    states in fp32 (NVFP4: arXiv:2509.25149, Sec. 4.1)."""
    full = precision in (Precision.FP32, Precision.TF32)
    weights = grads = 4.0 if full else 2.0
    master = 0.0 if full else 4.0
    state = {
        Optimizer.ADAMW: 8.0,  # fp32 momentum + variance
        Optimizer.ADAM_8BIT: 2.0,  # Dettmers et al. 2022: 1 B each
        Optimizer.SGD: 4.0,  # fp32 momentum
        Optimizer.ADAFACTOR: 0.0,  # factored second moment, no momentum (Shazeer & Stern 2018)
    }[optimizer]
    return weights, grads, master + state


@dataclass(frozen=True)
class MemoryPlan:
    zero: int
    recompute: Recompute
    tensor_parallel: int
    micro_batch: int
    recompute_layers: int | None = None
    """With full recomputation: how many layers recompute their forward pass (block
    recomputation); ``None``: every layer."""

    def recomputed(self, layers: int) -> int:
        """Layers of ``layers`` whose forward pass runs twice under this plan."""
        if self.recompute is not Recompute.FULL:
            return 0
        if self.recompute_layers is None:
            return layers
        return max(0, min(layers, self.recompute_layers))

    def recompute_share(self, layers: int) -> float:
        """Share of the layers recomputed: what the recomputation costs in time."""
        return self.recomputed(layers) / layers if layers > 0 else 0.0

    def recompute_text(self, layers: int) -> str:
        """``none``, ``full`` or ``full (k of L layers)``."""
        k = self.recomputed(layers)
        if self.recompute is Recompute.FULL and 0 < k < layers:
            return f"full ({k} of {layers} layers)"
        return self.recompute.value


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes per GPU by part, for one plan."""

    plan: MemoryPlan
    weights: float
    gradients: float
    optimizer: float
    activations: float
    logits: float
    capacity: float
    layers: int = 0
    """The model's layers (what a partial recomputation counts against)."""

    @property
    def recompute_text(self) -> str:
        """``none``, ``full`` or ``full (k of L layers)``."""
        return self.plan.recompute_text(self.layers)

    @property
    def model_bytes(self) -> float:
        """States plus activations and logits: what the formulas count."""
        return self.weights + self.gradients + self.optimizer + self.activations + self.logits

    @property
    def overhead(self) -> float:
        return CONTEXT_BYTES + FRAGMENTATION * self.model_bytes

    @property
    def total(self) -> float:
        return self.model_bytes + self.overhead

    @property
    def fits(self) -> bool:
        return self.total <= self.capacity

    def gib(self, value: float) -> float:
        return value / GIB


def activation_bytes(
    shape: Shape,
    micro_batch: int,
    recompute: Recompute,
    tp: int,
    flash: bool,
    recompute_layers: int | None = None,
) -> float:
    """All layers' stored activations per GPU (Korthikanti et al. 2022).

    A recomputed layer keeps only its input (``2 s b h``); the others keep everything; while
    a recomputed layer runs backward its whole working set is live once more."""
    s, b, h, a = shape.seq_len, micro_batch, shape.hidden, shape.heads
    score_term = 0.0 if (flash or recompute is not Recompute.NONE) else 5.0 * a * s / h
    layer = s * b * h * (34.0 + score_term) / tp
    if recompute is Recompute.FULL:
        k = shape.layers if recompute_layers is None else min(shape.layers, recompute_layers)
        kept = 2.0 * s * b * h / tp
        return k * kept + (shape.layers - k) * layer + (layer if k > 0 else 0.0)
    return shape.layers * layer


def estimate_memory(
    workload: Workload, shape: Shape, gpus: float, capacity_gib: float, plan: MemoryPlan
) -> MemoryEstimate:
    """Per-GPU memory of ``workload`` on ``gpus`` GPUs of ``capacity_gib`` under ``plan``."""
    setup = workload.setup
    n = workload.params or 0.0
    wb, gb, ob = bytes_per_param(setup.precision, setup.optimizer)
    tp = plan.tensor_parallel
    dp = max(1.0, gpus / tp)
    weights_n, trained = n * wb, n
    if setup.method.frozen_base:
        base = NF4_BYTES if setup.method is Method.QLORA else 2.0
        trained = adapter_params(shape, setup.lora_rank)
        weights_n = n * base + trained * wb
    weights = weights_n / tp / (dp if plan.zero >= 3 else 1.0)
    grads = trained * gb / tp / (dp if plan.zero >= 2 else 1.0)
    optim = trained * ob / tp / (dp if plan.zero >= 1 else 1.0)
    acts = activation_bytes(
        shape, plan.micro_batch, plan.recompute, tp, setup.flash_attention, plan.recompute_layers
    )
    logits = 4.0 * shape.seq_len * plan.micro_batch * shape.vocab / tp
    return MemoryEstimate(
        plan, weights, grads, optim, acts, logits, capacity_gib * GIB, shape.layers
    )


def choose_plan(
    workload: Workload,
    shape: Shape,
    gpus: float,
    gpus_per_node: float,
    capacity_gib: float,
    *,
    nvlink: bool,
) -> MemoryEstimate:
    """The lightest plan that fits, or the most frugal one tried when none does.

    Given ``--zero`` / ``--recompute`` are kept (``--recompute full``: every layer); when
    both are left to the planner it also tries tensor parallelism inside an NVLink node (1,
    2, 4, 8) before recomputation, as Megatron-style runs do, and then recomputes the fewest
    layers that fit (at the tensor-parallel size that needs fewest).
    """
    setup = workload.setup
    zero = setup.zero if setup.zero is not None else (3 if gpus > 1 else 0)
    auto = setup.zero is None and setup.recompute is None
    recomputes = (
        [setup.recompute] if setup.recompute is not None else [Recompute.NONE, Recompute.FULL]
    )
    tps = [1]
    if auto and nvlink:
        tps = [t for t in (1, 2, 4, 8) if t <= min(gpus, gpus_per_node)]
    last: MemoryEstimate | None = None
    for recompute in recomputes:
        if recompute is Recompute.FULL and auto:
            partial = _fewest_recomputed(workload, shape, gpus, capacity_gib, zero, tps)
            if partial is not None:
                return partial
        for tp in tps:
            plan = MemoryPlan(zero, recompute, tp, setup.micro_batch)
            last = estimate_memory(workload, shape, gpus, capacity_gib, plan)
            if last.fits:
                return last
    assert last is not None
    return last


def _fewest_recomputed(
    workload: Workload,
    shape: Shape,
    gpus: float,
    capacity_gib: float,
    zero: int,
    tps: list[int],
) -> MemoryEstimate | None:
    """The plan recomputing the fewest layers that fits (fewer tensor-parallel GPUs on a
    tie); ``None`` when recomputing every layer does not fit either."""
    best: MemoryEstimate | None = None
    micro = workload.setup.micro_batch
    for tp in tps:

        def at(k: int, tp: int = tp) -> MemoryEstimate:
            plan = MemoryPlan(zero, Recompute.FULL, tp, micro, k)
            return estimate_memory(workload, shape, gpus, capacity_gib, plan)

        if not at(shape.layers).fits:
            continue
        low, high = 1, shape.layers  # memory falls as k grows: the fewest k that fits
        while low < high:
            mid = (low + high) // 2
            if at(mid).fits:
                high = mid
            else:
                low = mid + 1
        found = at(low)
        if best is None or low < best.plan.recomputed(shape.layers):
            best = found
    if best is not None and best.plan.recomputed(shape.layers) == shape.layers:
        every = MemoryPlan(zero, Recompute.FULL, best.plan.tensor_parallel, micro)
        return estimate_memory(workload, shape, gpus, capacity_gib, every)
    return best


def largest_micro_batch(
    workload: Workload, shape: Shape, gpus: float, capacity_gib: float, plan: MemoryPlan
) -> int:
    """The largest power-of-two micro-batch (up to 64) that fits under ``plan``; 0 if none."""
    best = 0
    for b in (1, 2, 4, 8, 16, 32, 64):
        trial = MemoryPlan(plan.zero, plan.recompute, plan.tensor_parallel, b)
        if not estimate_memory(workload, shape, gpus, capacity_gib, trial).fits:
            break
        best = b
    return best


def min_gpus_to_fit(workload: Workload, shape: Shape, capacity_gib: float) -> int | None:
    """Fewest GPUs (a power of two up to 4096) that fit with ZeRO-3 and full recompute."""
    plan = MemoryPlan(3, Recompute.FULL, 1, 1)
    for k in range(13):
        count: int = 2**k
        if estimate_memory(workload, shape, float(count), capacity_gib, plan).fits:
            return count
    return None


def suggestions(
    workload: Workload,
    shape: Shape,
    gpus: float,
    capacity_gib: float,
    est: MemoryEstimate,
    gpu: str = "these GPUs",
) -> list[str]:
    """What would fit, most direct first."""
    out: list[str] = []
    plan = est.plan
    if plan.zero < 3 and gpus > 1:
        out.append(f"shard states with ZeRO-3 / FSDP across the {gpus:g} GPUs (--zero 3)")
    if plan.recompute is not Recompute.FULL:
        out.append("recompute activations (--recompute full)")
    if plan.micro_batch > 1:
        out.append("a smaller micro-batch with gradient accumulation (--micro-batch 1)")
    need = min_gpus_to_fit(workload, shape, capacity_gib)
    if need is not None and need > gpus:
        out.append(f"more GPUs: at least {need} x {gpu} with ZeRO-3 and full recompute")
    global_batch = workload.setup.global_batch
    if need is not None and global_batch:
        count = float(max(need, gpus))
        plan_fit = MemoryPlan(3, Recompute.FULL, 1, 1)
        micro = max(1, min(largest_micro_batch(workload, shape, count, capacity_gib, plan_fit),
                           global_batch))  # fmt: skip
        steps = accumulation_steps(global_batch, micro, count)
        out.append(
            f"on {count:g} GPUs: micro-batch {micro} x {steps} accumulation steps "
            f"for the global batch of {global_batch}"
        )
    method = workload.setup.method
    if workload.setup.optimizer is Optimizer.ADAMW and not method.frozen_base:
        out.append("8-bit Adam (--optimizer 8bit-adam: 10 instead of 16 B/param)")
    if method is Method.LORA:
        out.append("a 4-bit base (--method qlora: 0.52 instead of 2 B per frozen parameter)")
    if need is None:
        out.append("a GPU with more memory")
    one_node = need is None or (need > gpus and gpus <= 8)
    if one_node and not workload.setup.method.frozen_base:
        out.append("if this is fine-tuning: --method lora (bf16 base) or qlora (4-bit base)")
    return out


def accumulation_steps(global_batch: int, micro_batch: int, data_parallel: float) -> int:
    """Gradient-accumulation steps so micro x steps x data-parallel >= global batch."""
    return max(1, math.ceil(global_batch / (micro_batch * max(1.0, data_parallel))))
