"""Benchmark: how fast ``gpuplan tui`` reaches an interactive catalog, and what it loads.

Writes benchmarks/results/tui.md. Two measures, each in fresh processes:

* headless: a child interpreter imports the app, mounts the Catalog screen on the
  bundled catalog and prints ``ready`` once the table has rows and focus; the time is
  measured by the parent from spawn to that line (interpreter start included).
* terminal: when ``tmux`` is installed, the real ``gpuplan tui`` command runs in a
  detached tmux pane and the pane is polled until the catalog's status line shows.

The child also reports which cloud SDK modules are loaded once the catalog is up, and
after switching to the Fleet screen.

Usage: python scripts/bench_tui.py [--runs N]
       python scripts/bench_tui.py --against DIR [--runs N]

``--against DIR`` compares this checkout with another one (``git worktree add DIR REV``
or ``git archive REV gpuplan pricing policies | tar -x -C DIR``): headless runs of the
two, interleaved so that both see the same load, written to
benchmarks/results/tui_before_after.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "tui.md"
COMPARED = ROOT / "benchmarks" / "results" / "tui_before_after.md"
CHILD = """
import sys, time
import asyncio, json
from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.context import TuiContext

SDK_ROOTS = ("boto3", "botocore", "google", "azure")

def sdks():
    return sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] in SDK_ROOTS})

async def main():
    app = GpuplanApp(TuiContext(policies_dir=__import__("pathlib").Path(sys.argv[1])))
    async with app.run_test(size=(100, 30)) as pilot:
        while not app.screen.query("#offers") or app.screen.query_one("#offers").row_count == 0:
            await pilot.pause(0.005)
        await pilot.pause()
        print("ready", time.process_time(), flush=True)
        rows = app.screen.query_one("#offers").row_count
        offers = len(app.screen.catalog.offers)
        at_catalog = sdks()
        await pilot.press("3")
        await pilot.pause(0.5)
        print(json.dumps({"rows": rows, "offers": offers, "catalog": at_catalog, "fleet": sdks(),
                          "fleet_screen": type(app.screen).__name__}), flush=True)

asyncio.run(main())
"""


def headless_run(policies: Path, root: Path = ROOT) -> tuple[float, float, dict[str, object]]:
    start = time.perf_counter()
    child = subprocess.Popen(  # the child imports the gpuplan of ``root`` (its cwd)
        [sys.executable, "-c", CHILD, str(policies)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=root,
    )
    assert child.stdout is not None
    ready = None
    cpu = 0.0
    report: dict[str, object] = {}
    for line in child.stdout:
        if line.startswith("ready") and ready is None:
            ready = time.perf_counter() - start
            cpu = float(line.split()[1])
        elif line.startswith("{"):
            report = json.loads(line)
    child.wait(timeout=60)
    if ready is None or child.returncode != 0:
        raise SystemExit(f"headless run failed (exit {child.returncode})")
    return ready, cpu, report


def terminal_run(gpuplan: str, policies: Path) -> float | None:
    """Seconds from launching ``gpuplan tui`` in tmux to the catalog status line."""
    if shutil.which("tmux") is None:
        return None
    session = f"bench-tui-{os.getpid()}"
    command = f"{gpuplan} tui --policies {policies}"
    start = time.perf_counter()
    subprocess.run(
        ["tmux", "new-session", "-d", "-s", session, "-x", "100", "-y", "30", command],
        check=True,
    )
    try:
        deadline = start + 30
        while time.perf_counter() < deadline:
            pane = subprocess.run(
                ["tmux", "capture-pane", "-t", session, "-p"], capture_output=True, text=True
            ).stdout
            if "sort: " in pane and " offers" in pane:  # the catalog's status line
                return time.perf_counter() - start
            time.sleep(0.01)
        return None
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another checkout to compare with")
    args = parser.parse_args()
    policies = ROOT / "policies"
    if args.against is not None:
        return compare(args.against.resolve(), policies, args.runs)
    gpuplan = str(Path(sys.executable).with_name("gpuplan"))

    headless: list[float] = []
    cpu: list[float] = []
    report: dict[str, object] = {}
    for _ in range(args.runs):
        seconds, used, report = headless_run(policies)
        headless.append(seconds)
        cpu.append(used)
    terminal = [t for t in (terminal_run(gpuplan, policies) for _ in range(args.runs)) if t]

    def line(name: str, values: list[float]) -> str:
        if not values:
            return f"| {name} | not measured (tmux not installed) | | |"
        return (
            f"| {name} | {statistics.median(values):.2f} s | {min(values):.2f} s "
            f"| {max(values):.2f} s |"
        )

    text = "\n".join(
        [
            "# `gpuplan tui`: time to an interactive catalog",
            "",
            f"Measured {datetime.now(UTC):%Y-%m-%d} by `python scripts/bench_tui.py "
            f"--runs {args.runs}` on {platform.machine()}, {os.cpu_count()} CPU(s), "
            f"Python {platform.python_version()}; bundled catalog "
            f"({report.get('offers')} offers, the first {report.get('rows')} drawn). "
            "Each run is a fresh process.",
            "",
            "| measure | median | min | max |",
            "|---|---|---|---|",
            line("headless: spawn -> catalog rows and focus (wall)", headless),
            line("headless: CPU time of that process until then", cpu),
            line("real terminal (tmux): `gpuplan tui` -> status line drawn", terminal),
            "",
            f"Load average while measuring: {os.getloadavg()[0]:.2f} (on "
            f"{os.cpu_count()} CPU(s)); wall times grow with it, CPU time much less.",
            "",
            "Cloud SDK packages loaded (of boto3, botocore, google, azure):",
            "",
            f"- with the Catalog screen up: {report.get('catalog') or 'none'}",
            f"- after switching to the Fleet screen ({report.get('fleet_screen')}): "
            f"{report.get('fleet') or 'none'}",
            "",
        ]
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)
    return 0


def compare(other: Path, policies: Path, runs: int) -> int:
    """Headless start-up of ``other`` (before) and this checkout (after), interleaved."""
    measured: dict[str, tuple[list[float], list[float]]] = {"before": ([], []), "after": ([], [])}
    loads = []
    for _ in range(runs):
        for name, root in (("before", other), ("after", ROOT)):
            wall, cpu, _ = headless_run(policies, root)
            measured[name][0].append(wall)
            measured[name][1].append(cpu)
            loads.append(os.getloadavg()[0])

    def cells(values: list[float]) -> str:
        return f"{statistics.median(values):.2f} s | {min(values):.2f} s | {max(values):.2f} s"

    lines = [
        "# `gpuplan tui`: start-up before and after",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d} by `python scripts/bench_tui.py --against "
        f"{other.name} --runs {runs}` on {platform.machine()}, {os.cpu_count()} CPU(s), "
        f"Python {platform.python_version()}: {runs} fresh processes each, before and after "
        "in turn; headless, 100x30, bundled catalog, until the table has rows and focus. "
        f"Load average {min(loads):.1f}-{max(loads):.1f} while measuring.",
        "",
        "| checkout | CPU median | CPU min | CPU max | wall median | wall min | wall max |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, (wall, cpu) in measured.items():
        lines.append(f"| {name} | {cells(cpu)} | {cells(wall)} |")
    text = "\n".join([*lines, ""])
    COMPARED.parent.mkdir(parents=True, exist_ok=True)
    COMPARED.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
