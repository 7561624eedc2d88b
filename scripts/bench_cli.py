"""Benchmark (not a test) of cold CLI start-up; writes benchmarks/results/cli.md.

Records, for ``gpuplan estimate --params 7B --tokens 1T`` and ``gpuplan catalog --gpu
H100`` run as fresh processes (the way a person or a cron job runs them):

- wall time, CPU time (user + sys) and peak resident memory (``ru_maxrss`` of that one
  child, read with ``os.wait4``): min, median and max of ``--runs`` runs (default 7),
  next to a bare ``python -c pass`` as the interpreter's own floor;
- the import profile of one run (``python -X importtime``): the slowest modules by
  cumulative time, the self time summed per top-level package, and whether any cloud
  SDK or textual was imported (none should be: they load inside the commands that
  need them).

Run: ``python scripts/bench_cli.py [--runs N]`` from the repository root (a few seconds
per run on 2 cores).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "cli.md"
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("estimate", "--params", "7B", "--tokens", "1T"),
    ("catalog", "--gpu", "H100"),
)
HEAVY = ("boto3", "botocore", "google", "azure", "textual", "matplotlib")


@dataclass(frozen=True)
class Run:
    wall_s: float
    cpu_s: float
    peak_rss_mib: float


def gpuplan_argv() -> list[str]:
    """The installed console script next to this interpreter, else ``python -m gpuplan``."""
    script = Path(sys.executable).with_name("gpuplan")
    if script.exists():
        return [str(script)]
    found = shutil.which("gpuplan")
    return [found] if found else [sys.executable, "-m", "gpuplan"]


def one_run(argv: list[str]) -> Run:
    """Run ``argv`` once; wall, CPU and peak RSS of that child alone."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, cwd=ROOT)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {child.returncode}")
    # Linux reports ru_maxrss in KiB.
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def runs(argv: list[str], count: int) -> list[Run]:
    one_run(argv)  # warm the file cache and .pyc files; not counted
    return [one_run(argv) for _ in range(count)]


@dataclass(frozen=True)
class ImportProfile:
    total_s: float
    slowest: list[tuple[float, str]]
    by_package: list[tuple[float, str]]
    heavy: list[str]
    modules: int


def import_profile(command: tuple[str, ...], top: int = 12) -> ImportProfile:
    """Parse ``-X importtime`` of one run (stderr lines: self us | cumulative us | name)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gpuplan", *command],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    rows: list[tuple[float, str]] = []
    per_package: dict[str, float] = defaultdict(float)
    total, modules = 0.0, 0
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        head, cumulative_us, name = line.split("|", 2)
        self_us = head.removeprefix("import time:")
        module = name.rstrip()
        depth = (len(module) - len(module.lstrip())) // 2
        module = module.strip()
        modules += 1
        per_package[module.split(".")[0]] += int(self_us) / 1e6
        if depth == 0:
            total += int(cumulative_us) / 1e6
        if depth <= 2:
            rows.append((int(cumulative_us) / 1e6, module))
    rows.sort(reverse=True)
    packages = sorted(((s, p) for p, s in per_package.items()), reverse=True)
    heavy = sorted(p for p in per_package if p in HEAVY)
    return ImportProfile(total, rows[:top], packages[:top], heavy, modules)


def stats_row(label: str, values: list[float], fmt: str) -> str:
    cells = (min(values), statistics.median(values), max(values))
    return f"| {label} | " + " | ".join(format(v, fmt) for v in cells) + " |"


def timing_section(title: str, measured: list[Run], count: int) -> list[str]:
    return [
        f"### {title}",
        "",
        f"{count} fresh processes (one unmeasured warm-up run first).",
        "",
        "| | min | median | max |",
        "|---|---:|---:|---:|",
        stats_row("wall s", [r.wall_s for r in measured], ".3f"),
        stats_row("CPU s (user+sys)", [r.cpu_s for r in measured], ".3f"),
        stats_row("peak RSS MiB", [r.peak_rss_mib for r in measured], ".1f"),
        "",
    ]


def profile_section(command: tuple[str, ...], prof: ImportProfile) -> list[str]:
    return [
        f"### Import profile of `gpuplan {' '.join(command)}`",
        "",
        f"{prof.modules} modules imported; all imports together (sum of the top-level "
        f"cumulative times): {prof.total_s:.3f} s. Cloud SDKs, textual or matplotlib "
        f"imported: {', '.join(prof.heavy) or 'none'}.",
        "",
        "| cumulative s | module (depth <= 2) |",
        "|---:|---|",
        *[f"| {s:.3f} | `{m}` |" for s, m in prof.slowest],
        "",
        "| self s, summed | top-level package |",
        "|---:|---|",
        *[f"| {s:.3f} | `{p}` |" for s, p in prof.by_package],
        "",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    count = parser.parse_args().runs
    started = time.perf_counter()
    base = gpuplan_argv()
    floor = runs([sys.executable, "-c", "pass"], count)
    measured = {c: runs([*base, *c], count) for c in COMMANDS}
    profiles = {c: import_profile(c) for c in COMMANDS}
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        "# Cold CLI start-up: wall time, peak memory, import profile",
        "",
        f"Written by `python scripts/bench_cli.py --runs {count}` on {stamp}; "
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"{platform.system()}; load average {os.getloadavg()[0]:.2f} at the end "
        f"(the machine was shared with other work). Took {time.perf_counter() - started:.0f} s.",
        "",
        "Medians are the figures to quote. CPU time compares across machines better than "
        "wall time, which also holds waiting for a core on a shared machine. Peak RSS is "
        "the child's own `ru_maxrss` (read with `os.wait4`).",
        "",
        "## Timings",
        "",
        *timing_section("`python -c pass` (the interpreter alone)", floor, count),
    ]
    for command in COMMANDS:
        lines += timing_section(f"`gpuplan {' '.join(command)}`", measured[command], count)
    lines += ["## Import profiles (`python -X importtime -m gpuplan ...`, one run each)", ""]
    for command in COMMANDS:
        lines += profile_section(command, profiles[command])
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines), encoding="utf-8")
    print(OUT.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
