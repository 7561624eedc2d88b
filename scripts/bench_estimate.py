"""Benchmark (not a test) of ``gpuplan estimate``; writes benchmarks/results/estimate.md.

Records:
- cold wall time of ``gpuplan estimate --params 7B --tokens 1T`` (fresh processes),
- its import profile (``python -X importtime``), the slowest modules by cumulative time,
- the time to estimate the whole bundled catalog: every GPU x GPU counts x pricing models
  x regions, for the default counts (powers of two 1..1024) and for every count 1..1024.

Run: ``python scripts/bench_estimate.py`` from the repository root.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "estimate.md"
COMMAND = ["estimate", "--params", "7B", "--tokens", "1T"]
RUNS = 7


def cold_runs() -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of fresh ``python -m gpuplan estimate`` processes."""
    walls, cpus = [], []
    for _ in range(RUNS):
        before = os.times()
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "gpuplan", *COMMAND],
            check=True,
            stdout=subprocess.DEVNULL,
            cwd=ROOT,
        )
        walls.append(time.perf_counter() - start)
        after = os.times()
        cpus.append(
            (after.children_user - before.children_user)
            + (after.children_system - before.children_system)
        )
    return walls, cpus


def import_profile(top: int = 15) -> tuple[float, list[tuple[float, str]]]:
    """Total import time and the slowest top-level-ish imports of one estimate run."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gpuplan", *COMMAND],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    rows: list[tuple[float, str]] = []
    total = 0.0
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        parts = line.split("|")
        cumulative = int(parts[1].strip()) / 1e6
        module = parts[2].rstrip()
        depth = (len(module) - len(module.lstrip())) // 2
        if depth == 0:
            total += cumulative
        if depth <= 2:
            rows.append((cumulative, module.strip()))
    rows.sort(reverse=True)
    return total, rows[:top]


def whole_catalog() -> list[tuple[str, int, int, float]]:
    """(label, feasible, infeasible, seconds) for two count sets over the bundled catalog."""
    sys.path.insert(0, str(ROOT))
    from gpuplan.core.planner.options import PlanRequest
    from gpuplan.core.planner.ranking import plan
    from gpuplan.loaders.catalog import load_catalog
    from gpuplan.usecases.estimate import EstimateArgs, build_workload

    catalog = load_catalog()
    workload = build_workload(EstimateArgs(params="7B", tokens="1T"))
    results = []
    for label, counts in (
        ("powers of two 1..1024", tuple(float(2**k) for k in range(11))),
        ("every count 1..1024", tuple(float(k) for k in range(1, 1025))),
    ):
        request = PlanRequest(workload=workload, counts=counts)
        start = time.perf_counter()
        result = plan(catalog, request)
        seconds = time.perf_counter() - start
        results.append((label, len(result.options), len(result.infeasible), seconds))
    return results


def main() -> int:
    walls, cpus = cold_runs()
    total_import, slow = import_profile()
    catalog_runs = whole_catalog()
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        "# `gpuplan estimate` benchmark",
        "",
        f"Written by `scripts/bench_estimate.py` on {stamp}; "
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.2f} at the end of the run.",
        "",
        f"## Cold `gpuplan {' '.join(COMMAND)}` ({RUNS} fresh processes)",
        "",
        "| | min | median | max |",
        "|---|---|---|---|",
        f"| wall s | {min(walls):.3f} | {statistics.median(walls):.3f} | {max(walls):.3f} |",
        f"| CPU s (user+sys) | {min(cpus):.3f} | {statistics.median(cpus):.3f} | {max(cpus):.3f} |",
        "",
        "CPU time is the figure to compare across machines: on a shared machine the wall "
        "time also holds waiting for a core.",
        "",
        "## Import profile (`python -X importtime`), slowest imports (depth <= 2)",
        "",
        f"All imports of the run (sum of top-level cumulative times): {total_import:.3f} s.",
        "",
        "| cumulative s | module |",
        "|---|---|",
        *[f"| {seconds:.3f} | `{module}` |" for seconds, module in slow],
        "",
        "## Whole catalog: every GPU x counts x pricing models x regions (7B, 1T tokens)",
        "",
        "| counts | feasible options | left out | seconds |",
        "|---|---|---|---|",
        *[f"| {label} | {ok:,} | {bad:,} | {s:.2f} |" for label, ok, bad, s in catalog_runs],
        "",
    ]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines), encoding="utf-8")
    print(OUT.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
