"""The few fitted constants of the two-part model, each with where it was fitted.

Part one, steady state (:mod:`gpuplan.core.planner.efficiency`, :mod:`.comm`): MFU once a
job runs, fitted to framework benchmark tables that run the same software on several GPU
generations (``tests/core/planner/anchors/throughput_anchors.csv``)::

    MFU = STEADY_BASE x architecture x h / (h + WIDTH_HALF) x precision
          x 1 / (1 + exposed communication) x ...

Part two, goodput: published GPU-hours / steady-state GPU-hours of public runs
(``tests/core/planner/published_runs.csv``): what runs lose to restarts, evaluation,
checkpoints, data stalls and ramp-up. Its spread, measured by leaving whole sources (a lab,
a model family) out at a time, sets the stated range. ``scripts/bench_accuracy.py`` refits
and prints every figure; change them only by rerunning it.
"""

from __future__ import annotations

STEADY_BASE = 0.715
"""Steady-state bf16 MFU of a very wide dense model on one NVLink node of H100s: fitted (313
rows, each GPU at its measured matmul ceiling; torchtitan's 30 rows on 500 W H100 96GB
HBM2e are left out: not the table's H100)."""
WIDTH_HALF = 384.0
"""Hidden size at which the width factor ``h / (h + WIDTH_HALF)`` is one half: fitted."""
MEMORY_TRAFFIC = 0.2
"""Share of compute time memory-bound kernels take on a GPU with 300 FLOP per byte: fitted."""
FP8_SPEEDUP = 1.13
"""Steady-state fp8 / bf16 throughput on the same GPU: fitted (anchor tables' fp8 rows)."""
FP4_OVER_FP8 = 1.10
"""Steady-state fp4 (NVFP4) / fp8 throughput on the same GPU: the median of the 33 anchor
rows that differ only in precision (Megatron-Bridge 26.02-26.08 on B200, B300, GB200,
GB300). It depends on the model, not the GPU's fp4 peak: Llama 3.1 405B 1.32-1.41 on GB200
and GB300 alike, Llama 3 70B 1.05-1.41, Nemotron 3 Super 0.88-1.04; with a model left out
the median error is 22-32% (scripts/fit_steady_state.py)."""
INTRA_EXPOSED = 0.03
"""Share of compute time the in-node traffic leaves exposed on NVLink 4 (900 GB/s): assumed
(the anchor tables run 8-GPU NVLink nodes only; PCIe parts get 0.42, a 0.70 factor)."""
INTER_EXPOSED_PER_DOUBLING = 0.004
"""Share of compute time exposed per doubling of nodes at 400 Gbit/s per GPU: the median
over the anchor tables' rows that differ only in GPU count (19 pairs: llm-foundry 8 to 512
GPUs, NeMo 128 to 512; they scale almost flat; 0.0039)."""
A2A_EXPOSED = 0.5
"""Share of the expert all-to-all time not overlapped with compute: fitted on the MoE anchor
rows whose all-to-all crosses the fabric (multi-node HGX: DeepSeek-V3, Qwen3)."""
MATMUL_SHARE_REFERENCE = 794.5 / 989.4
"""The H100 SXM's measured bf16 matmul ceiling over its dense peak (0.803): the architecture
factor of a GPU is its own share over this one (pricing/gpus.toml ``bf16_matmul_tflops``)."""
ARCH_CDNA3 = 0.7
"""A CDNA part without a measured matmul ceiling (MI250X), relative to the H100: assumed.
MI300X, MI325X and MI355X use their measured ceilings (``bf16_matmul_tflops``)."""
QLORA_FACTOR = 0.7
"""QLoRA throughput / LoRA throughput on the same GPU (dequantisation of NF4 blocks)."""

GOODPUT = 0.692
"""Steady-state GPU-hours / published GPU-hours, median over the public runs: fitted."""
RESIDUAL_LOW = 0.77
"""10th percentile of held-out (leave-source-out) published / estimated GPU-hours."""
RESIDUAL_HIGH = 1.56
"""90th percentile of held-out published / estimated GPU-hours: with the 10th, an 80%
interval by construction."""
RANGE_COVERAGE = 0.79
"""Share of published runs inside their held-out range (scripts/bench_accuracy.py)."""
RANGE_SOURCE = (
    "10th-90th percentile of the held-out residuals (published / estimated GPU-hours, each "
    "source left out whole) over the public runs in tests/core/planner/published_runs.csv "
    "(scripts/bench_accuracy.py)"
)
