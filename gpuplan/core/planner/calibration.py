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
FP8_GEMM_SHARE = 0.27
"""Share ``f`` of a bf16 training step spent in the matrix products an fp8 recipe runs at
the fp8 peak: fp8 runs ``1 / ((1 - f) + f / s)`` times bf16, ``s`` = fp8 peak / bf16 peak
(1.16x bf16 where s is 2, as on every GPU of the table with fp8; a fixed 1.13x before).
Fitted (scripts/fit_low_precision.py) on the 9 anchor pairs that differ only in precision
(H100 6, GB200 2, GB300 1; rows on power-limited variants left out); a GPU left out: median
error 9.1%, worst 1.20x."""
FP4_GEMM_SHARE = 0.34
"""The same share for fp4 (NVFP4/MXFP4) recipes: 1.34x bf16 where fp4 is 4x the bf16 peak
(B200, GB200; MI355X 3.97x), 1.40x where it is 6x (B300, GB300): Blackwell Ultra's larger
fp4 peak buys 3.9% with no per-GPU constant. Fitted on the 33 Megatron-Bridge nvfp4 rows
against the same release's fp8/mxfp8 rows through ``FP8_GEMM_SHARE`` (no nvfp4 row has a
bf16 row beside it). A GPU left out: median error 24.3%, worst 1.41x; the gain over fp8
depends on the model more than the GPU (Nemotron 3 Super 0.88-1.04x, Llama 3.1 405B
1.36-1.45x, Llama 3 70B 1.11-1.23x on GB200 and 1.39-1.48x on GB300). NVIDIA's NVFP4 recipe
keeps embeddings, the output head, attention and about 15% of the linear layers in higher
precision (arXiv:2509.25149, Sec. 4.1)."""
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
RESIDUAL_LOW = 0.78
"""10th percentile of held-out (leave-source-out) published / estimated GPU-hours."""
RESIDUAL_HIGH = 1.56
"""90th percentile of held-out published / estimated GPU-hours: with the 10th, an 80%
interval by construction."""
RANGE_COVERAGE = 0.78
"""Share of published runs inside their held-out range (scripts/bench_accuracy.py)."""
RANGE_SOURCE = (
    "10th-90th percentile of the held-out residuals (published / estimated GPU-hours, each "
    "source left out whole) over the public training runs listed in docs/estimating.md "
    "section 11 (the table ships with the source, not the wheel)"
)
