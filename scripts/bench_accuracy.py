"""Planner accuracy on published runs, cross-validated (leave-one-out).

Run: python scripts/bench_accuracy.py

For each row of tests/core/planner/published_runs.csv it runs exactly what an outside check
runs: ``gpuplan estimate --params P [--active-params A] --tokens D --gpu G --gpus N
--seq-len S --precision X [--layers L --hidden H --heads A --vocab V] --json`` and takes
the median ``gpu_hours`` (and ``gpu_hours_low/high``) over the options with exactly N GPUs.

The free constants of gpuplan/core/planner/calibration.py (two bases and the three
model-scale constants) enter the estimate as one multiplicative factor, so each run's
estimate under other constants is ``median x (current factor / refitted factor)``. Each
run is then estimated by constants fitted on all the *other* runs (leave-one-out); the
headline errors and the range coverage are those held-out figures, not the in-sample fit.
Rows with a ``left_out`` reason are listed but neither fitted nor scored.

Writes benchmarks/results/accuracy.md (dated) and the block of docs/estimating.md between
its ``accuracy:begin`` / ``accuracy:end`` markers; prints the full-table fit to paste into
calibration.py when it differs.
"""

from __future__ import annotations

import contextlib
import csv
import io
import itertools
import json
import math
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

from gpuplan.cli.main import main as gpuplan
from gpuplan.core.gpus import Precision
from gpuplan.core.planner import calibration as cal
from gpuplan.core.planner.efficiency import model_scale
from gpuplan.loaders.catalog import load_gpus

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tests/core/planner/published_runs.csv"
RESULTS = ROOT / "benchmarks/results/accuracy.md"
DOC = ROOT / "docs/estimating.md"
BEGIN, END = "<!-- accuracy:begin -->", "<!-- accuracy:end -->"
SLOPES = tuple(k / 40 for k in range(14))
"""0 to 0.325 in steps of 0.025."""
REFERENCES = (1e9, 2e9, 3e9, 5e9, 1e10, 2e10, 3e10)
EXPONENTS = (0, 1, 2, 3)
"""Whole exponents: how the reference size grows with the GPU's peak."""


@dataclass(frozen=True)
class Run:
    row: dict[str, str]
    published: float
    median: float
    low: float
    high: float
    fixed: float
    """median x the calibrated factor: the part no free constant touches."""
    hopper: bool
    peak: float
    params: float

    @property
    def name(self) -> str:
        return self.row["model"]


Fit = tuple[float, float, float, float, float]


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


def medians(argv: list[str], gpus: float) -> tuple[float, float, float, float]:
    """Median gpu_hours, low, high and calibrated factor over options with ``gpus`` GPUs."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = gpuplan(argv)
    if code != 0:
        raise SystemExit(f"gpuplan {' '.join(argv)} exited {code}")
    options = [o for o in json.loads(out.getvalue())["options"] if o["gpus"] == gpus]
    factors = [o["mfu_factors"] for o in options]
    calibrated = statistics.median(
        f.get("base (end to end)", 1.0) * f.get("model scale", 1.0) for f in factors
    )
    return (
        float(statistics.median(o["gpu_hours"] for o in options)),
        float(statistics.median(o["gpu_hours_low"] for o in options)),
        float(statistics.median(o["gpu_hours_high"] for o in options)),
        float(calibrated),
    )


def load_runs() -> tuple[list[Run], list[dict[str, str]]]:
    gpus = load_gpus()
    runs, left_out = [], []
    with TABLE.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            if row["left_out"]:
                left_out.append(row)
                continue
            spec = gpus.resolve(row["gpu"])
            median, low, high, factor = medians(argv_of(row), float(row["gpus"]))
            runs.append(
                Run(
                    row,
                    float(row["gpu_hours"]),
                    median,
                    low,
                    high,
                    median * factor,
                    spec.architecture.startswith("Hopper"),
                    spec.peak_tflops(Precision.BF16) or 312.0,
                    float(row["params"]),
                )
            )
    return runs, left_out


def estimate(run: Run, fit: Fit) -> float:
    base_a100, base_hopper, slope, reference, exponent = fit
    base = base_hopper if run.hopper else base_a100
    scale = model_scale(run.params, run.peak, slope=slope, reference=reference, exponent=exponent)
    return run.fixed / (base * scale)


def fit(runs: list[Run]) -> Fit:
    """Least absolute log error; each base is the median of its generation's log ratios."""
    best: tuple[float, Fit] | None = None
    for slope, reference, exponent in itertools.product(SLOPES, REFERENCES, EXPONENTS):
        unit: Fit = (1.0, 1.0, slope, reference, exponent)
        bases = []
        for hopper in (False, True):
            logs = [math.log(estimate(r, unit) / r.published) for r in runs if r.hopper is hopper]
            bases.append(math.exp(statistics.median(logs)) if logs else 1.0)
        candidate: Fit = (bases[0], bases[1], slope, reference, exponent)
        loss = sum(abs(math.log(estimate(r, candidate) / r.published)) for r in runs)
        if best is None or loss < best[0]:
            best = (loss, candidate)
    assert best is not None
    return best[1]


RANGE_QUANTILES = 10
"""The range is the 10th-90th percentile of held-out residuals (cuts 1/10 and 9/10): an
80% interval by construction, as the issue asks ("about 8 in 10 published runs inside"),
not a band picked for its score. Over 44 runs the 10th-95th had been used (82% at 1.94x);
over 58 it held 83% at 2.42x, the 10th-90th 79% at 2.05x."""


def band(values: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(values, n=RANGE_QUANTILES, method="inclusive")
    return cuts[0], cuts[-1]


@dataclass(frozen=True)
class Held:
    run: Run
    estimate: float
    low: float
    high: float

    @property
    def ratio(self) -> float:
        return self.estimate / self.run.published

    @property
    def inside(self) -> bool:
        return self.low <= self.run.published <= self.high


def cross_validate(runs: list[Run]) -> list[Held]:
    """Each run estimated by a fit on the others; its range from the others' residuals."""
    centrals = [estimate(r, fit(runs[:i] + runs[i + 1 :])) for i, r in enumerate(runs)]
    residuals = [r.published / c for r, c in zip(runs, centrals, strict=True)]
    held = []
    for i, (run, central) in enumerate(zip(runs, centrals, strict=True)):
        low, high = band(residuals[:i] + residuals[i + 1 :])
        held.append(Held(run, central, central * low, central * high))
    return held


def naive(run: Run) -> float:
    """6ND at a flat 40% (A100) / 35% (H100) MFU: the baseline the issue names."""
    n = float(run.row["active_params"] or run.row["params"])
    mfu = 0.35 if run.hopper else 0.40
    return 6 * n * float(run.row["tokens"]) / (run.peak * 1e12 * mfu) / 3600


def summary(errors: list[float], worst: list[float]) -> str:
    return f"median error {statistics.median(errors):.1%}, worst {max(worst):.2f}x"


def report(runs: list[Run], held: list[Held], left_out: list[dict[str, str]]) -> list[str]:
    table = [
        "| run | GPU x count | published GPU-h | held-out estimate | ratio | held-out range "
        "| inside | in-sample (CLI) |",
        "|---|---|---:|---:|---:|---|:-:|---:|",
    ]
    for h in held:
        r = h.run
        typical = " (typical)" if r.row["gpus_note"].startswith("typical") else ""
        table.append(
            f"| {r.name} | {r.row['gpu']} x {r.row['gpus']}{typical} | {r.published:,.0f} "
            f"| {h.estimate:,.0f} | {h.ratio:.2f} | {h.low:,.0f} - {h.high:,.0f} "
            f"| {'yes' if h.inside else 'no'} | {r.median / r.published:.2f} |"
        )
    ratios = [h.ratio for h in held]
    widths = [h.high / h.low for h in held]
    naive_ratios = [naive(r) / r.published for r in runs]
    in_sample = [r.median / r.published for r in runs]
    lines = [
        *table,
        "",
        f"**Leave-one-out over {len(held)} runs: "
        f"{summary([abs(x - 1) for x in ratios], [max(x, 1 / x) for x in ratios])}; "
        f"published figure inside the held-out range for "
        f"{sum(h.inside for h in held)}/{len(held)} runs "
        f"({sum(h.inside for h in held) / len(held):.0%}); median range width "
        f"{statistics.median(widths):.2f}x.**",
        "",
        f"In sample (the shipped constants, fitted on every run): "
        f"{summary([abs(x - 1) for x in in_sample], [max(x, 1 / x) for x in in_sample])}; "
        f"naive 6ND at 40% (A100) / 35% (H100): "
        f"{summary([abs(x - 1) for x in naive_ratios], [max(x, 1 / x) for x in naive_ratios])}.",
        "",
        "Left out (not fitted, not scored), each for a reason that is not its error:",
        "",
        *[f"- {row['model']}: {row['left_out']}." for row in left_out],
    ]
    return lines


def fit_lines(runs: list[Run], held: list[Held]) -> list[str]:
    full = fit(runs)
    low, high = band([h.run.published / h.estimate for h in held])
    shipped = (
        cal.BASE_A100,
        cal.BASE_HOPPER,
        cal.SCALE_SLOPE,
        cal.SCALE_REFERENCE_PARAMS,
        cal.SCALE_PEAK_EXPONENT,
    )
    same = all(math.isclose(a, b, rel_tol=0.01) for a, b in zip(full, shipped, strict=True))
    same = same and math.isclose(low, cal.RESIDUAL_LOW, abs_tol=0.01)
    same = same and math.isclose(high, cal.RESIDUAL_HIGH, abs_tol=0.01)
    coverage = sum(h.inside for h in held) / len(held)
    same = same and math.isclose(coverage, cal.RANGE_COVERAGE, abs_tol=0.005)
    return [
        f"Fit on every run: BASE_A100 {full[0]:.3f}, BASE_HOPPER {full[1]:.3f}, "
        f"SCALE_SLOPE {full[2]:g}, SCALE_REFERENCE_PARAMS {full[3]:.0e}, "
        f"SCALE_PEAK_EXPONENT {full[4]:g}; residual band {low:.2f} / {high:.2f}, "
        f"RANGE_COVERAGE {coverage:.2f} "
        + ("(as shipped in calibration.py)." if same else "(DIFFERS from calibration.py).")
    ]


def main() -> int:
    runs, left_out = load_runs()
    held = cross_validate(runs)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    block = [
        *report(runs, held, left_out),
        "",
        *fit_lines(runs, held),
        "",
        f"Written by `python scripts/bench_accuracy.py` on {stamp} (bundled catalog). "
        "Held-out estimate: the CLI's median `gpu_hours` over the options with exactly N "
        "GPUs, with the constants refitted without that run; its range from the other "
        "runs' held-out residuals (10th-90th percentile).",
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        "# Planner accuracy on published runs (leave-one-out)\n\n" + "\n".join(block) + "\n",
        encoding="utf-8",
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
