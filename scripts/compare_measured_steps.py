"""The planner against training steps measured on a real GPU.

Run: python scripts/compare_measured_steps.py [benchmarks/results/h200_steps.jsonl]

Reads the JSON lines written by scripts/measure_train_step.py on the device machine (one
H200) and, for each measured case, runs exactly what a user runs::

    gpuplan estimate --params P --tokens 10B --gpu H200 --gpus 1 --seq-len S --layers L
        --hidden H --heads A --vocab V --micro-batch B --zero 0 --recompute none|full
        [--method lora] --price-per-gpu-hour 1 --json

(the catalog sells H200 only in 8-GPU instances; a price per GPU-hour makes the one-GPU
option). The planner's steady-state rate is ``MFU x dense peak / model FLOPs per token``
(before goodput); the measured MFU is ``measured tokens/s x the planner's model FLOPs per
token / dense peak``. Memory: the planner's per-GPU total (GiB) against PyTorch's peak
allocation. Writes benchmarks/results/h200_step.md.
"""

from __future__ import annotations

import contextlib
import io
import json
import statistics
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpuplan.cli.main import main as gpuplan  # noqa: E402

STEPS = ROOT / "benchmarks" / "results" / "h200_steps.jsonl"
OUT = ROOT / "benchmarks" / "results" / "h200_step.md"
GPU = "H200"


@dataclass(frozen=True)
class Compared:
    case: dict[str, Any]
    predicted_tokens_per_s: float
    measured_mfu: float
    planner_mfu: float
    planner_memory_gib: float
    factors: dict[str, float]

    @property
    def ratio(self) -> float:
        """Measured / predicted steady-state throughput."""
        return float(self.case["tokens_per_s"]) / self.predicted_tokens_per_s

    @property
    def memory_ratio(self) -> float:
        """Planner memory / measured peak allocation."""
        return self.planner_memory_gib / float(self.case["max_allocated_gib"])


def argv_of(case: dict[str, Any]) -> list[str]:
    argv = [
        "estimate", "--params", f"{case['params_total']:.6g}", "--tokens", "10B",
        "--gpu", GPU, "--gpus", "1", "--seq-len", str(case["seq_len"]),
        "--layers", str(case["layers"]), "--hidden", str(case["hidden"]),
        "--heads", str(case["heads"]), "--vocab", str(case["vocab"]),
        "--micro-batch", str(case["micro_batch"]), "--zero", "0",
        "--recompute", "full" if case["checkpointing"] else "none",
        "--price-per-gpu-hour", "1", "--json",
    ]  # fmt: skip
    if case["method"] == "lora":
        argv += ["--method", "lora", "--lora-rank", "16"]
    return argv


def planned(case: dict[str, Any]) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = gpuplan(argv_of(case))
    if code != 0:
        raise SystemExit(f"gpuplan {' '.join(argv_of(case))} exited {code}")
    record: dict[str, Any] = json.loads(out.getvalue())
    return record


def compare(case: dict[str, Any], peak_tflops: float) -> Compared:
    record = planned(case)
    option = record["options"][0]
    work = record["workload"]
    flops_per_token = float(work["total_flops"]) / float(work["tokens"])
    mfu = float(option["mfu"])
    predicted = mfu * peak_tflops * 1e12 / flops_per_token
    measured_mfu = float(case["tokens_per_s"]) * flops_per_token / (peak_tflops * 1e12)
    return Compared(
        case, predicted, measured_mfu, mfu, float(option["memory_per_gpu_gb"]),
        dict(option["mfu_factors"]),
    )  # fmt: skip


def load(path: Path) -> tuple[dict[str, Any], float | None, list[dict[str, Any]]]:
    env: dict[str, Any] = {}
    matmul: float | None = None
    cases = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["kind"] == "environment":
            env = row
        elif row["kind"] == "matmul":
            matmul = float(row["tflops"])
        elif row["kind"] == "case":
            cases.append(row)
    return env, matmul, cases


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.2f}, range {min(values):.2f}-{max(values):.2f}"


def report(path: Path) -> list[str]:
    from gpuplan.core.kinds import Precision
    from gpuplan.loaders.catalog import load_gpus

    peak = load_gpus().resolve(GPU).peak_tflops(Precision.BF16) or 0.0
    env, matmul, cases = load(path)
    ran = [c for c in cases if c["status"] == "ok"]
    compared = [compare(c, peak) for c in ran]
    lines = [
        "# The planner against training steps measured on one H200",
        "",
        f"Measured {env.get('date', '?')} on {env.get('device', '?')} (torch "
        f"{env.get('torch', '?')}, transformers {env.get('transformers', '?')}) by "
        "`scripts/measure_train_step.py` (raw: `benchmarks/results/h200_steps.jsonl`); "
        f"compared {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by "
        "`python scripts/compare_measured_steps.py`.",
        "",
        "The stack: Llama-style decoders from `transformers` (random weights), PyTorch SDPA "
        "attention, eager mode (no `torch.compile`), one GPU. Pretraining: fp32 master "
        "weights, bf16 autocast, fused AdamW (16 B/parameter); LoRA: bf16 frozen base, rank "
        "16 on every linear layer (peft). Median of 6 steps after 3 warm-up steps. The "
        "`compiled` cases wrap the same model in `torch.compile` (the 2.7B compiled case "
        "was still compiling when the device run's time limit ended it).",
        "",
        f"Dense bf16 peak (spec table): {peak:,.1f} TFLOP/s; an 8192^3 bf16 matrix product "
        f"measured {matmul or 0:,.0f} TFLOP/s ({(matmul or 0) / peak:.0%} of it).",
        "",
        "| case | method | L x h, seq x batch | recompute | measured tokens/s | planner steady "
        "tokens/s | measured / planner | measured MFU | planner MFU | memory: measured "
        "peak / planner (GiB) |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for c in compared:
        case = c.case
        lines.append(
            f"| {case['name']} ({case['params_total'] / 1e9:.2f}B) | {case['method']} | "
            f"{case['layers']} x {case['hidden']}, {case['seq_len']} x {case['micro_batch']} "
            f"| {'full' if case['checkpointing'] else 'none'} | {case['tokens_per_s']:,.0f} | "
            f"{c.predicted_tokens_per_s:,.0f} | {c.ratio:.2f} | {c.measured_mfu:.1%} | "
            f"{c.planner_mfu:.1%} | {case['max_allocated_gib']:.1f} / "
            f"{c.planner_memory_gib:.1f} |"
        )
    for case in cases:
        if case["status"] != "ok":
            lines.append(f"| {case['name']} | {case['method']} | not run: {case['status']} |")
    lines += ["", *summary(compared)]
    return lines


def summary(compared: list[Compared]) -> list[str]:
    eager = [c for c in compared if not c.case.get("compiled")]
    compiled = [c for c in compared if c.case.get("compiled")]
    pretrain = [c.ratio for c in eager if c.case["method"] == "pretrain"]
    lora = [c.ratio for c in eager if c.case["method"] == "lora"]
    lines = [
        f"Measured / planner steady-state throughput, eager: {spread([c.ratio for c in eager])}"
        f" (pretraining {spread(pretrain)}"
        + (f"; LoRA {spread(lora)}" if lora else "")
        + ")"
        + (f"; compiled: {spread([c.ratio for c in compiled])}" if compiled else "")
        + ".",
        f"Planner memory / measured peak allocation, eager: "
        f"{spread([c.memory_ratio for c in eager])}"
        + (f"; compiled: {spread([c.memory_ratio for c in compiled])}" if compiled else "")
        + ".",
    ]
    return lines


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else STEPS
    lines = report(path)
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
