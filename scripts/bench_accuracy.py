"""Planner accuracy on published runs, exactly as the outside check runs it.

Run: python scripts/bench_accuracy.py

For each row of tests/planner/published_runs.csv it runs
``gpuplan estimate --params P [--active-params A] --tokens D --gpu G --gpus N --seq-len S
--precision X [--layers L --hidden H --heads A --vocab V] --json`` through the CLI entry
point and takes the median ``gpu_hours`` over the options with exactly N GPUs. Writes
benchmarks/results/accuracy.md (with the date) and the table block of docs/estimating.md
between its ``accuracy:begin`` / ``accuracy:end`` markers.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import platform
import statistics
import time
from pathlib import Path

from gpuplan.cli.main import main as gpuplan

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tests/planner/published_runs.csv"
RESULTS = ROOT / "benchmarks/results/accuracy.md"
DOC = ROOT / "docs/estimating.md"
BEGIN, END = "<!-- accuracy:begin -->", "<!-- accuracy:end -->"


def argv_of(row: dict[str, str]) -> list[str]:
    argv = ["estimate", "--params", row["params"]]
    if row["active_params"]:
        argv += ["--active-params", row["active_params"]]
    argv += ["--tokens", row["tokens"], "--gpu", row["gpu"], "--gpus", row["gpus"]]
    argv += ["--seq-len", row["seq_len"], "--precision", row["precision"]]
    for key in ("layers", "hidden", "heads", "vocab"):
        if row[key]:
            argv += [f"--{key}", row[key]]
    return [*argv, "--json"]


def median_gpu_hours(argv: list[str], gpus: float) -> float:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = gpuplan(argv)
    if code != 0:
        raise SystemExit(f"gpuplan {' '.join(argv)} exited {code}")
    options = json.loads(out.getvalue())["options"]
    return float(statistics.median(o["gpu_hours"] for o in options if o["gpus"] == gpus))


def main() -> int:
    with TABLE.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    table = [
        "| run | GPU x count | published GPU-h | estimated | ratio | in shared/ |",
        "|---|---|---:|---:|---:|---|",
    ]
    errors: dict[str, list[float]] = {"shared": [], "all": []}
    worst: dict[str, list[float]] = {"shared": [], "all": []}
    for row in rows:
        gpus = float(row["gpus"])
        estimated = median_gpu_hours(argv_of(row), gpus)
        published = float(row["gpu_hours"])
        ratio = estimated / published
        typical = " (typical)" if row["gpus_note"].startswith("typical") else ""
        table.append(
            f"| {row['model']} | {row['gpu']} x {row['gpus']}{typical} | {published:,.0f} "
            f"| {estimated:,.0f} | {ratio:.2f} | {row['in_shared']} |"
        )
        for key in ("shared", "all") if row["in_shared"] == "yes" else ("all",):
            errors[key].append(abs(ratio - 1))
            worst[key].append(max(ratio, 1 / ratio))
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    summary = [
        f"Consistent runs from shared/: median error {statistics.median(errors['shared']):.1%}, "
        f"worst {max(worst['shared']):.2f}x. Whole table: median "
        f"{statistics.median(errors['all']):.1%}, worst {max(worst['all']):.2f}x.",
        "",
        f"Written by `python scripts/bench_accuracy.py` on {stamp} ({platform.machine()}, "
        "bundled catalog): each row is the median `gpu_hours` of `gpuplan estimate ... --json` "
        "over the options with exactly that many GPUs.",
    ]
    block = [*table, "", *summary]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        "# Planner accuracy on published runs\n\n" + "\n".join(block) + "\n", encoding="utf-8"
    )
    text = DOC.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        DOC.write_text(head + BEGIN + "\n" + "\n".join(block) + "\n" + END + tail, encoding="utf-8")
    print("\n".join(block))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
