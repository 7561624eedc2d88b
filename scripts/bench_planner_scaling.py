"""Benchmark (not a test) of planner cost as the catalog grows; writes
benchmarks/results/planner_scaling.md.

The bundled catalog (1x) is replicated into synthetic regions (``us-east-1-syn3``...)
to make 10x and 100x catalogs (``--sizes 1,3,10,30,100`` for a finer curve): the same
GPUs and prices, k times the offers.
For each size the planner (``gpuplan.core.planner.ranking.plan``, what ``gpuplan
estimate`` calls) plans the same job, 7B parameters on 1T tokens, over every GPU, the
default GPU counts, every pricing model and every region, and we record:

- wall time: median of ``--repeats`` runs (fewer for the big sizes), untraced;
- peak memory of planning alone, from one more run under ``tracemalloc`` (the catalog
  is built before tracing starts), and the memory the added offer copies hold (the
  bundled offers themselves are loaded before and not counted);
- options evaluated (feasible + left out with reasons) and the growth exponent
  (least-squares slope of log time against log offers: 1.0 is linear).

Run: ``python scripts/bench_planner_scaling.py [--sizes 1,10,100]`` from the
repository root (about 2.5 minutes on 2 shared cores, most of it the traced 100x run).
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import platform
import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "planner_scaling.md"
sys.path.insert(0, str(ROOT))

from gpuplan.core.catalog.query import Catalog  # noqa: E402
from gpuplan.core.planner.options import PlanRequest  # noqa: E402
from gpuplan.core.planner.ranking import plan  # noqa: E402
from gpuplan.loaders.catalog import load_catalog  # noqa: E402
from gpuplan.usecases.clouds.entries import register_facts  # noqa: E402
from gpuplan.usecases.planner.estimate import EstimateArgs, build_workload  # noqa: E402

register_facts()  # every listed cloud's facts, as the CLI registers them first

MIB = 1024 * 1024


@dataclass(frozen=True)
class Size:
    factor: int
    offers: int
    regions: int
    feasible: int
    left_out: int
    seconds: list[float]
    plan_peak_mib: float
    catalog_mib: float

    @property
    def median_s(self) -> float:
        return statistics.median(self.seconds)

    @property
    def options(self) -> int:
        return self.feasible + self.left_out


def replicate(base: Catalog, factor: int) -> Catalog:
    """``factor`` copies of every offer; copy k > 0 sits in region ``<region>-syn<k>``."""
    offers = [
        o if k == 0 else replace(o, **{"region": f"{o.region}-syn{k}"})
        for k in range(factor)
        for o in base.offers
    ]
    return Catalog(offers=tuple(offers), gpus=base.gpus)


def measure(base: Catalog, request: PlanRequest, factor: int, repeats: int) -> Size:
    gc.collect()
    tracemalloc.start()
    catalog = replicate(base, factor)
    catalog_bytes = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    result = plan(catalog, request)
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    del result
    seconds = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        result = plan(catalog, request)
        seconds.append(time.perf_counter() - start)
    return Size(
        factor=factor,
        offers=len(catalog.offers),
        regions=len({(o.provider, o.region) for o in catalog.offers}),
        feasible=len(result.options),
        left_out=len(result.infeasible),
        seconds=seconds,
        plan_peak_mib=peak / MIB,
        catalog_mib=catalog_bytes / MIB,
    )


def slope(xs: list[float], ys: list[float]) -> float:
    """Least-squares slope of log y on log x."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = statistics.fmean(lx), statistics.fmean(ly)
    num = sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True))
    return num / sum((a - mx) ** 2 for a in lx)


def table(sizes: list[Size]) -> list[str]:
    first = sizes[0]
    rows = [
        "| catalog | offers | regions | options evaluated | feasible | median s | runs | "
        "us per option | time vs 1x | planning peak MiB | added copies MiB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s in sizes:
        rows.append(
            f"| {s.factor}x | {s.offers:,} | {s.regions} | {s.options:,} | {s.feasible:,} | "
            f"{s.median_s:.3f} | {len(s.seconds)} | {1e6 * s.median_s / s.options:.1f} | "
            f"{s.median_s / first.median_s:.1f}x | {s.plan_peak_mib:.1f} | "
            f"{s.catalog_mib:.1f} |"
        )
    return rows


def report(sizes: list[Size], took: float, argv: str) -> str:
    offers = [float(s.offers) for s in sizes]
    time_exp = slope(offers, [s.median_s for s in sizes])
    mem_exp = slope(offers, [s.plan_peak_mib for s in sizes])
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        "# Planner scaling: time and memory as the catalog grows",
        "",
        f"Written by `python scripts/bench_planner_scaling.py{argv}` on {stamp}; "
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs; "
        f"load average {os.getloadavg()[0]:.2f} at the end (shared machine). "
        f"Took {took:.0f} s.",
        "",
        "Job: 7B parameters, 1T tokens, every GPU, the default GPU counts, every pricing "
        "model and region (`gpuplan.core.planner.ranking.plan`, in process). Synthetic "
        "catalogs replicate the bundled offers into `<region>-synK` regions. Time is the "
        "median of untraced runs; planning peak is one extra run under `tracemalloc` "
        "(Python allocations made while planning, the catalog excluded).",
        "",
        *table(sizes),
        "",
        "## How cost grows",
        "",
        f"- Time grows as offers^{time_exp:.2f} (least-squares slope on log-log; 1.00 is "
        f"linear): {sizes[-1].factor}x the offers took "
        f"{sizes[-1].median_s / sizes[0].median_s:.0f}x the time.",
        f"- Planning peak memory grows as offers^{mem_exp:.2f}, options evaluated from "
        f"{sizes[0].options:,} to {sizes[-1].options:,} "
        f"({sizes[-1].options / sizes[0].options:.0f}x): every option is kept (feasible "
        "ones ranked, the rest with their reasons), so memory follows the option count.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description="Planner time and memory vs catalog size.")
    parser.add_argument("--sizes", default="1,10,100")
    args = parser.parse_args()
    factors = [int(x) for x in args.sizes.split(",")]
    started = time.perf_counter()
    base = load_catalog()
    request = PlanRequest(workload=build_workload(EstimateArgs(params="7B", tokens="1T")))
    sizes = []
    for factor in factors:
        repeats = 5 if factor <= 3 else 3 if factor <= 10 else 1
        sizes.append(measure(base, request, factor, repeats))
        s = sizes[-1]
        print(f"{factor}x: {s.offers} offers, {s.median_s:.3f} s, {s.plan_peak_mib:.1f} MiB")
    argv = "" if args.sizes == "1,10,100" else f" --sizes {args.sizes}"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(report(sizes, time.perf_counter() - started, argv), encoding="utf-8")
    print(OUT.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
