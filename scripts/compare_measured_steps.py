"""The planner against training steps measured on a real GPU.

Run: python scripts/compare_measured_steps.py [benchmarks/results/h200_steps.jsonl]

Reads the JSON lines written by scripts/measure_train_step.py on the device machine (one
H200; several runs, each opened by an ``environment`` line) and, for each measured case,
runs exactly what a user runs::

    gpuplan estimate --params P --tokens 10B --gpu H200 --gpus 1 --seq-len S --layers L
        --hidden H --heads A --vocab V --micro-batch B --zero 0 --recompute none|full
        [--method lora --lora-rank 16] --price-per-gpu-hour 1 --json

(the catalog sells H200 only in 8-GPU instances; a price per GPU-hour makes the one-GPU
option). The planner's steady-state rate is ``MFU x dense peak / model FLOPs per token``
(before goodput); the measured MFU is ``measured tokens/s x the planner's model FLOPs per
token / dense peak``. Memory: the planner's per-GPU total (GiB: its ``_gb`` figures are
2^30 bytes) against PyTorch's peak allocation during the steps. Writes
benchmarks/results/h200_step.md.
"""

from __future__ import annotations

import contextlib
import io
import json
import statistics
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpuplan.cli.main import main as gpuplan  # noqa: E402

STEPS = ROOT / "benchmarks" / "results" / "h200_steps.jsonl"
OUT = ROOT / "benchmarks" / "results" / "h200_step.md"
GPU = "H200"
ANCHOR = "1.3B"
"""The case whose measured rate calibrates the others (Calibration below)."""
BUILD_MARGIN = 1.05
"""A LoRA base is built in fp32 and then cast to bf16. Runs 1 and 2 counted the peak from
before the build, so a recorded peak within 5% of the fp32 base (4 B x parameters) is that
build, not the training step; run 3 records the build apart (``build_peak_gib``)."""


@dataclass(frozen=True)
class Run:
    index: int
    env: dict[str, Any]
    matmul_tflops: float | None


@dataclass
class Compared:
    case: dict[str, Any]
    run: Run
    predicted_tokens_per_s: float
    measured_mfu: float
    planner_mfu: float
    planner_memory_gib: float
    flops_per_token: float
    factors: dict[str, float] = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        """Measured / predicted steady-state throughput."""
        return float(self.case["tokens_per_s"]) / self.predicted_tokens_per_s

    @property
    def memory_comparable(self) -> bool:
        """The recorded peak is a training step's, of the setup the planner assumes (bf16
        weights with fp32 master and AdamW states, or LoRA on a bf16 base)."""
        if self.case.get("bf16_weights"):
            return False
        if "build_peak_gib" in self.case:
            return True
        fp32_base = 4 * float(self.case["params_total"]) / 2**30
        return float(self.case["max_allocated_gib"]) > BUILD_MARGIN * fp32_base

    @property
    def memory_ratio(self) -> float:
        """Planner memory / measured peak allocation."""
        return self.planner_memory_gib / float(self.case["max_allocated_gib"])

    @property
    def compiled(self) -> bool:
        return bool(self.case.get("compiled"))

    @property
    def key(self) -> tuple[Any, ...]:
        return config_key(self.case)


def config_key(case: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two measurements the same job (run and name aside)."""
    shape = tuple(case[k] for k in ("method", "layers", "hidden", "seq_len", "micro_batch"))
    flags = tuple(bool(case.get(k)) for k in ("checkpointing", "bf16_weights", "compiled"))
    return shape + flags


def argv_of(case: dict[str, Any], *extra: str) -> list[str]:
    argv = [
        "estimate", "--params", f"{case['params_total']:.6g}", "--tokens", "10B",
        "--gpu", GPU, "--gpus", "1", "--seq-len", str(case["seq_len"]),
        "--layers", str(case["layers"]), "--hidden", str(case["hidden"]),
        "--heads", str(case["heads"]), "--vocab", str(case["vocab"]),
        "--micro-batch", str(case["micro_batch"]), "--zero", "0",
        "--recompute", "full" if case["checkpointing"] else "none",
        "--price-per-gpu-hour", "1", "--json", *extra,
    ]  # fmt: skip
    if case["method"] == "lora":
        argv += ["--method", "lora", "--lora-rank", "16"]
    return argv


def planned(case: dict[str, Any], *extra: str) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = gpuplan(argv_of(case, *extra))
    if code != 0:
        raise SystemExit(f"gpuplan {' '.join(argv_of(case, *extra))} exited {code}")
    record: dict[str, Any] = json.loads(out.getvalue())
    return record


def steady_rate(record: dict[str, Any], peak_tflops: float) -> tuple[float, float]:
    """(steady-state tokens/s before goodput, model FLOPs per token) of a planner answer."""
    work = record["workload"]
    flops_per_token = float(work["total_flops"]) / float(work["tokens"])
    mfu = float(record["options"][0]["mfu"])
    return mfu * peak_tflops * 1e12 / flops_per_token, flops_per_token


def compare(case: dict[str, Any], peak_tflops: float, run: Run | None = None) -> Compared:
    record = planned(case)
    option = record["options"][0]
    predicted, flops_per_token = steady_rate(record, peak_tflops)
    measured_mfu = float(case["tokens_per_s"]) * flops_per_token / (peak_tflops * 1e12)
    return Compared(
        case, run or Run(0, {}, None), predicted, measured_mfu, float(option["mfu"]),
        float(option["memory_per_gpu_gib"]), flops_per_token, dict(option["mfu_factors"]),
    )  # fmt: skip


def load_runs(path: Path) -> list[tuple[Run, dict[str, Any]]]:
    """Every case line with the run (environment and matrix product) it belongs to."""
    out: list[tuple[Run, dict[str, Any]]] = []
    run = Run(0, {}, None)
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["kind"] == "environment":
            run = Run(run.index + 1, row, None)
        elif row["kind"] == "matmul":
            run = Run(run.index, run.env, float(row["tflops"]))
        elif row["kind"] == "case":
            out.append((run, row))
    return out


def load(path: Path) -> tuple[dict[str, Any], float | None, list[dict[str, Any]]]:
    """The last run's environment and matrix product, and every case (all runs)."""
    runs = load_runs(path)
    last = runs[-1][0] if runs else Run(0, {}, None)
    return last.env, last.matmul_tflops, [case for _, case in runs]


def compare_all(path: Path, peak_tflops: float) -> list[Compared]:
    return [compare(c, peak_tflops, run) for run, c in load_runs(path) if c["status"] == "ok"]


def by_config(compared: list[Compared]) -> dict[tuple[Any, ...], list[Compared]]:
    groups: dict[tuple[Any, ...], list[Compared]] = {}
    for c in compared:
        groups.setdefault(c.key, []).append(c)
    return groups


def mean_ratio(group: list[Compared]) -> float:
    return statistics.fmean(c.ratio for c in group)


def assumed_setup(c: Compared) -> bool:
    """Eager, and the precision setup the planner plans (no bf16-only optimizer states)."""
    return not c.case.get("compiled") and not c.case.get("bf16_weights")


@dataclass(frozen=True)
class Calibrated:
    name: str
    measured: float
    shape_aware: float
    """The anchor's measured / planner ratio carried through the planner's shape model."""
    flat: float
    """The anchor's measured MFU applied to this case's FLOPs (``--mfu``)."""


def calibration(
    compared: list[Compared], peak_tflops: float, plan: Callable[..., dict[str, Any]] = planned
) -> list[Calibrated]:
    """One measured case (ANCHOR, the mean of its runs) predicts the other eager cases of the
    planner's setup on the same GPU, two ways: its measured/planner ratio times the planner's
    steady state for the case (what the width, recomputation and LoRA factors carry), and its
    measured MFU as ``--mfu`` for every case (no shape model)."""
    groups = [g for g in by_config(compared).values() if assumed_setup(g[0])]
    anchor = next(g for g in groups if g[0].case["name"] == ANCHOR)
    anchor_ratio = mean_ratio(anchor)
    anchor_mfu = statistics.fmean(c.measured_mfu for c in anchor)
    rows = []
    for group in groups:
        if group is anchor:
            continue
        first = group[0]
        measured = statistics.fmean(float(c.case["tokens_per_s"]) for c in group)
        flat, _ = steady_rate(plan(first.case, "--mfu", f"{anchor_mfu:.6f}"), peak_tflops)
        rows.append(
            Calibrated(
                first.case["name"], measured, anchor_ratio * first.predicted_tokens_per_s, flat
            )
        )
    return rows


def recompute_pairs(compared: list[Compared]) -> list[tuple[str, float, float]]:
    """(case, measured tokens/s with / without full recomputation, the planner's) for every
    shape measured both ways at the same micro-batch (run means)."""
    groups = by_config(compared)
    pairs = []
    for key, group in groups.items():
        if not group[0].case["checkpointing"]:
            continue
        plain = groups.get((*key[:5], False, *key[6:]))
        if not plain:
            continue
        measured = statistics.fmean(float(c.case["tokens_per_s"]) for c in group)
        measured /= statistics.fmean(float(c.case["tokens_per_s"]) for c in plain)
        predicted = group[0].predicted_tokens_per_s / plain[0].predicted_tokens_per_s
        pairs.append((plain[0].case["name"], measured, predicted))
    return pairs


def repeats(compared: list[Compared]) -> list[tuple[str, list[float]]]:
    """Configurations measured on more than one machine: their tokens/s per run."""
    return [
        (g[0].case["name"], [float(c.case["tokens_per_s"]) for c in g])
        for g in by_config(compared).values()
        if len({c.run.index for c in g}) > 1
    ]


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f}, range {min(values):.2f}-{max(values):.2f}"


def _peak() -> float:
    from gpuplan.core.catalog.kinds import Precision
    from gpuplan.loaders.catalog import load_gpus

    return load_gpus().resolve(GPU).peak_tflops(Precision.BF16) or 0.0


def report(path: Path) -> list[str]:
    peak = _peak()
    runs = load_runs(path)
    compared = compare_all(path, peak)
    envs = {run.index: run for run, _ in runs}
    failed = [(run, c) for run, c in runs if c["status"] != "ok"]
    lines = [
        "# The planner against training steps measured on one H200",
        "",
        f"Compared {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by "
        "`python scripts/compare_measured_steps.py` from the measurements of "
        "`scripts/measure_train_step.py` (raw: `benchmarks/results/h200_steps.jsonl`). "
        "Runs, each on a freshly started machine:",
        "",
        "| run | measured | device | torch | transformers | cases | 8192^3 bf16 matmul |",
        "|---|---|---|---|---|---|---:|",
    ]
    for run in envs.values():
        env = run.env
        lines.append(
            f"| {run.index} | {env.get('date', '?')} | {env.get('device', '?')} | "
            f"{env.get('torch', '?')} | {env.get('transformers', '?')} | "
            f"{env.get('cases', 'main, then compiled')} | {run.matmul_tflops or 0:,.0f} TFLOP/s "
            f"({(run.matmul_tflops or 0) / peak:.0%}) |"
        )
    lines += [
        "",
        "The stack: Llama-style decoders from `transformers` (random weights, vocabulary "
        "32,000), PyTorch SDPA attention, eager mode unless marked `compiled` "
        "(`torch.compile`), one GPU, no data loading. Pretraining: fp32 master weights, "
        "bf16 autocast, fused AdamW (the 16 B/parameter setup the planner assumes); "
        "`bf16 AdamW` cases keep weights, gradients and AdamW states in bf16 (8 B/parameter, "
        "no master copy: a framework choice the planner does not model). LoRA: bf16 frozen "
        "base, rank 16 on every linear layer (peft). Median of 6 steps after 3 warm-up steps. "
        f"Dense bf16 peak (spec table): {peak:,.1f} TFLOP/s; MFU is the planner's model "
        "FLOPs (6N + attention, no recomputation) per second over it; `/ matmul` is over the "
        "run's measured 8192^3 matrix product instead.",
        "",
        "What this checks: on one GPU and one software stack (eager Hugging Face "
        "`transformers` + SDPA, not Megatron or any tuned stack), how the planner's "
        "steady-state rate moves with model shape (width, recomputation, LoRA), the level an "
        "eager stack keeps of it, and the per-GPU memory model without sharding. What it "
        "does not check: communication, ZeRO/FSDP or tensor/pipeline parallelism, goodput, "
        "other GPU generations, the level of a tuned stack, data loading.",
        "",
        "| case | run | method | L x h, seq x batch | recompute | measured tokens/s | planner "
        "steady tokens/s | measured / planner | measured MFU (/ matmul) | planner MFU | "
        "memory: measured peak / planner (GiB) |",
        "|---|---:|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for c in compared:
        case = c.case
        ceiling = c.run.matmul_tflops or peak
        if c.memory_comparable:
            memory = f"{case['max_allocated_gib']:.1f} / {c.planner_memory_gib:.1f}"
        elif case.get("bf16_weights"):
            memory = f"{case['max_allocated_gib']:.1f} / n.a. (bf16 states)"
        else:
            memory = f"({case['max_allocated_gib']:.1f}: fp32 build) / {c.planner_memory_gib:.1f}"
        lines.append(
            f"| {case['name']} ({case['params_total'] / 1e9:.2f}B) | {c.run.index} | "
            f"{case['method']} | {case['layers']} x {case['hidden']}, {case['seq_len']} x "
            f"{case['micro_batch']} | {'full' if case['checkpointing'] else 'none'} | "
            f"{case['tokens_per_s']:,.0f} | {c.predicted_tokens_per_s:,.0f} | {c.ratio:.2f} | "
            f"{c.measured_mfu:.1%} ({c.measured_mfu * peak / ceiling:.1%}) | "
            f"{c.planner_mfu:.1%} | {memory} |"
        )
    for run, case in failed:
        lines.append(f"| {case['name']} | {run.index} | {case['method']} | not run: "
                     f"{case['status']} |")  # fmt: skip
    lines += ["", *summary(compared), "", *calibration_section(compared, peak)]
    lines += ["", *prose(compared, peak, list(envs.values()))]
    return lines


def prose(compared: list[Compared], peak: float, runs: list[Run]) -> list[str]:
    """A paragraph for docs/estimating.md, every figure from the comparison above."""
    groups = list(by_config(compared).values())
    eager = [mean_ratio(g) for g in groups if assumed_setup(g[0])]
    compiled = [mean_ratio(g) for g in groups if g[0].case.get("compiled")]
    bf16 = [mean_ratio(g) for g in groups if g[0].case.get("bf16_weights")]
    gains = [rate for _, rate, _, _ in bf16_pairs(compared)]
    memory = [c for c in compared if c.memory_comparable]
    plain = [c.memory_ratio for c in memory if not (c.case["checkpointing"] or c.compiled)]
    recomputed = [c.memory_ratio for c in memory if c.case["checkpointing"]]
    fitted = [c.memory_ratio for c in memory if c.case.get("compiled")] + recomputed
    rows = calibration(compared, peak)
    shape = [abs(r.measured / r.shape_aware - 1) for r in rows]
    flat = [abs(r.measured / r.flat - 1) for r in rows]
    gaps = [max(v) / min(v) - 1 for _, v in repeats(compared)]
    pairs = recompute_pairs(compared)
    ceilings = [r.matmul_tflops for r in runs if r.matmul_tflops]
    over = [r.name for r in rows if r.measured / r.shape_aware - 1 < -0.1]
    dates = sorted({str(r.env.get("date", "?"))[:10] for r in runs})
    text = (
        "**Checked on a real GPU** (`benchmarks/results/h200_step.md`, measured "
        f"{', '.join(dates)} on one H200 in {len(runs)} runs on fresh machines with "
        "`scripts/measure_train_step.py`: "
        "Llama-style models from `transformers`, SDPA attention, eager PyTorch, fp32 master "
        "weights + bf16 autocast + fused AdamW, LoRA rank 16 via peft; the 8192^3 bf16 "
        f"matrix product ran at {min(ceilings):.0f}-{max(ceilings):.0f} TFLOP/s, "
        f"{min(ceilings) / peak:.0%}-{max(ceilings) / peak:.0%} of the {peak:.0f} dense peak). "
        f"Eager PyTorch keeps **{min(eager):.2f}-{max(eager):.2f} (median "
        f"{statistics.median(eager):.2f}) of the planner's steady-state rate** over "
        f"{len(eager)} configurations from 125M to 6.7B, LoRA and full recomputation; the "
        f"same job on two machines differs by at most {max(gaps):.1%}. "
        f"`torch.compile` keeps {min(compiled):.2f}-{max(compiled):.2f}; bf16 weights and "
        f"AdamW states (no fp32 master) {min(bf16):.2f}-{max(bf16):.2f}, "
        f"{min(gains):.2f}-{max(gains):.2f}x the master-weight rate: the level is the "
        "stack's. "
        "**The shape model carries a calibration**: one measured case (1.3B) times the "
        "planner's width, recomputation and LoRA factors predicts the other "
        f"{len(rows)} cases within median {statistics.median(shape):.1%} (worst "
        f"{max(shape):.1%}; over-predicted by more than 10%: {', '.join(over)}), where one "
        f"flat MFU misses by median {statistics.median(flat):.1%} (worst {max(flat):.1%}). "
        "Full recomputation keeps "
        + ", ".join(f"{m:.2f} ({n})" for n, m, _ in pairs)
        + " of the measured rate without it; the planner's factors give "
        + ", ".join(f"{p:.2f}" for _, _, p in pairs)
        + ". `--throughput T --measured-on G` is the job's own rate (on the same GPU it "
        "returns T): to move a measurement between shapes, scale by the planner's "
        "steady-state ratio by hand. Memory: the planner's per-GPU figure is within "
        f"{min(fitted):.2f}-{max(fitted):.2f} of the peak allocation of the compiled stack "
        "and of the eager stack with recomputation, but eager without recomputation "
        f"allocates up to {1 / min(plain):.1f}x the figure (unfused fp32 logits and loss, "
        "fp32 norm inputs): Sec. 12. What it does not check: more than one GPU, another "
        "generation, Megatron or any other tuned stack, data loading."
    )
    return ["## For docs/estimating.md", "", textwrap.fill(text, width=92, break_on_hyphens=False)]


def summary(compared: list[Compared]) -> list[str]:
    groups = list(by_config(compared).values())
    eager = [g for g in groups if assumed_setup(g[0])]
    pretrain = [mean_ratio(g) for g in eager if g[0].case["method"] == "pretrain"]
    lora = [mean_ratio(g) for g in eager if g[0].case["method"] == "lora"]
    bf16 = [g for g in groups if g[0].case.get("bf16_weights")]
    compiled = [mean_ratio(g) for g in groups if g[0].case.get("compiled")]
    memory = [c for c in compared if c.memory_comparable]
    plain = [c.memory_ratio for c in memory if not (c.case["checkpointing"] or c.compiled)]
    lines = [
        "## Summary",
        "",
        f"Throughput, measured / planner steady state, per configuration (mean of its runs), "
        f"eager with the planner's setup ({len(eager)} configurations): "
        f"{spread([mean_ratio(g) for g in eager])} (pretraining {spread(pretrain)}; "
        f"LoRA {spread(lora)}); compiled: {spread(compiled)}; bf16 weights and states: "
        f"{spread([mean_ratio(g) for g in bf16])}.",
        "",
        "Same job on two machines (tokens/s per run): "
        + "; ".join(
            f"{name}: {' / '.join(f'{v:,.0f}' for v in values)} "
            f"({max(values) / min(values) - 1:.1%} apart)"
            for name, values in repeats(compared)
        )
        + ".",
        "",
        "bf16 weights and AdamW states against fp32 master weights, same shape (tokens/s; "
        "peak GiB): "
        + "; ".join(
            f"{name} {rate:.2f}x the rate, {gib:.1f} vs {ref_gib:.1f}"
            for name, rate, gib, ref_gib in bf16_pairs(compared)
        )
        + ".",
        "",
        "Planner memory / measured peak allocation (training peaks of the planner's setup, "
        "per measurement): eager without recomputation "
        f"{spread(plain)}; "
        "eager with full recomputation "
        f"{spread([c.memory_ratio for c in memory if c.case['checkpointing']])}; compiled "
        f"{spread([c.memory_ratio for c in memory if c.case.get('compiled')])}. "
        "Left out: bf16-state cases (8 B/parameter, the planner plans 16) and the LoRA "
        "peaks of runs 1-2 that were the fp32 build of the base, not a step (run 3 measured "
        "those cases again with the peak counted after the build).",
    ]
    return lines


def bf16_pairs(compared: list[Compared]) -> list[tuple[str, float, float, float]]:
    """(shape, tokens/s with bf16 states / with fp32 master, peak GiB of each) for every
    bf16-state case measured with fp32 master weights too (run means)."""
    groups = by_config(compared)
    pairs = []
    for key, group in groups.items():
        fp32 = groups.get((*key[:6], False, *key[7:]))
        if not group[0].case.get("bf16_weights") or not fp32:
            continue
        rate = statistics.fmean(float(c.case["tokens_per_s"]) for c in group)
        ref = statistics.fmean(float(c.case["tokens_per_s"]) for c in fp32)
        pairs.append(
            (
                fp32[0].case["name"], rate / ref, float(group[0].case["max_allocated_gib"]),
                float(fp32[0].case["max_allocated_gib"]),
            )
        )  # fmt: skip
    return pairs


def calibration_section(compared: list[Compared], peak: float) -> list[str]:
    rows = calibration(compared, peak)
    shape = [abs(r.measured / r.shape_aware - 1) for r in rows]
    flat = [abs(r.measured / r.flat - 1) for r in rows]
    lines = [
        "## Calibration from one measured case",
        "",
        f"The {ANCHOR} case (mean of its runs) predicts every other eager case of the "
        "planner's setup on the same GPU. Shape-aware: its measured / planner ratio times "
        "the planner's steady state for the case, i.e. the width factor h/(h+384), the "
        "full-recomputation factor 0.75 and the LoRA path carry "
        "the calibration. Flat: its measured MFU given as `--mfu` for every case (what a user "
        "can do today; no shape model). `--throughput T --measured-on H200` is the job's "
        "own rate: on the same GPU it returns T unchanged (checked below), so it cannot carry "
        "one shape's rate to another.",
        "",
        "| case | measured tokens/s | shape-aware | error | flat `--mfu` | error |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.name} | {r.measured:,.0f} | {r.shape_aware:,.0f} | "
            f"{r.measured / r.shape_aware - 1:+.1%} | {r.flat:,.0f} | "
            f"{r.measured / r.flat - 1:+.1%} |"
        )
    lines += [
        "",
        f"Shape-aware: median |error| {statistics.median(shape):.1%}, worst {max(shape):.1%}; "
        f"flat: median {statistics.median(flat):.1%}, worst {max(flat):.1%}.",
        "",
        "Full recomputation, measured tokens/s with / without at the same shape and "
        "micro-batch against the planner's: "
        + "; ".join(
            f"{name} {measured:.3f} (planner {predicted:.3f})"
            for name, measured, predicted in recompute_pairs(compared)
        )
        + ".",
        "",
        f"`--throughput` round trip: {throughput_round_trip(compared, peak)}.",
    ]
    return lines


def throughput_round_trip(compared: list[Compared], peak: float) -> str:
    anchor = next(c for c in compared if c.case["name"] == ANCHOR)
    rate = float(anchor.case["tokens_per_s"])
    back, _ = steady_rate(
        planned(anchor.case, "--throughput", f"{rate:.0f}", "--measured-on", GPU), peak
    )
    return f"{ANCHOR} at {rate:,.0f} tokens/s on H200 comes back as {back:,.0f}"


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else STEPS
    lines = report(path)
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
