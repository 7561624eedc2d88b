"""Benchmark (not a test) of the commands a person waits for; writes
benchmarks/results/commands.md.

Each command runs as a fresh process (``python -m gpuplan ...`` from the checkout, from
bytecode: the script compiles first), ``RUNS`` times, and the median wall and CPU
(user+sys of the child) are recorded: the whole-catalog ``estimate --json``,
``estimate --policy``, ``simulate`` and the getting-started demo ``stop-idle`` dry run.
With ``--ref-tree DIR --ref-python PY`` (an older checkout, e.g. ``git archive`` of a
commit, and a venv where its dependencies are installed) the same commands run there
too, interleaved with this checkout's, for a before/after table in one run under one load.

Run: ``python scripts/bench_commands.py`` (this checkout only) or with
``--ref-tree /tmp/old --ref-python /tmp/old/.venv/bin/python``.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "commands.md"
RUNS = 5
DEMO = {
    "GPUPLAN_FAKE_FLEET": "docs/examples/demo-fleet.json",
    "GPUPLAN_WEBHOOK_URL": "http://127.0.0.1:9/",
}
COMMANDS = [
    ("estimate --params 7B --tokens 1T --json", {}),
    ("estimate --params 7B --tokens 1T --policy policies/research-spot.yaml", {}),
    ("simulate --policy policies/research-spot.yaml", {}),
    ("stop-idle --policy docs/examples/demo-policy.yaml", DEMO),
]
Sample = tuple[list[float], list[float]]


def timed(python: str, tree: Path, command: str, env: dict[str, str]) -> tuple[float, float]:
    before = os.times()
    start = time.perf_counter()
    subprocess.run(
        [python, "-m", "gpuplan", *command.split()],
        cwd=tree,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )


def run(trees: dict[str, tuple[str, Path]]) -> dict[tuple[str, str], Sample]:
    out: dict[tuple[str, str], Sample] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for command, extra in COMMANDS:
            for attempt in range(RUNS + 1):  # the first of each is a warm-up, not counted
                for name, (python, tree) in trees.items():
                    env = {**extra, "GPUPLAN_DB": str(Path(tmp) / f"{name}.db")}
                    wall, cpu = timed(python, tree, command, env)
                    if attempt:
                        walls, cpus = out.setdefault((command, name), ([], []))
                        walls.append(wall)
                        cpus.append(cpu)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref-tree", type=Path, help="an older checkout to compare with")
    parser.add_argument("--ref-python", help="the interpreter of that checkout's venv")
    parser.add_argument("--ref-name", default="before", help="its column name")
    args = parser.parse_args()
    trees = {"this checkout": (sys.executable, ROOT)}
    if args.ref_tree:
        trees = {args.ref_name: (args.ref_python or sys.executable, args.ref_tree), **trees}
    for _, tree in trees.values():
        compileall.compile_dir(tree / "gpuplan", quiet=1)
    found = run(trees)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    head = " | ".join(f"{n}: wall s | {n}: CPU s" for n in trees)
    lines = [
        "# Commands a person waits for",
        "",
        f"Written by `scripts/bench_commands.py` on {stamp}; {os.cpu_count()} CPUs, load "
        f"average {os.getloadavg()[0]:.2f} at the end of the run. Median of {RUNS} fresh "
        "processes each, interleaved; CPU is user+sys of the child (10 ms ticks).",
        "",
        f"| `gpuplan ...` | {head} |",
        "|---|" + "---:|" * (2 * len(trees)),
    ]
    for command, _ in COMMANDS:
        cells = []
        for name in trees:
            walls, cpus = found[(command, name)]
            cells += [f"{statistics.median(walls):.2f}", f"{statistics.median(cpus):.2f}"]
        lines.append(f"| `{command}` | " + " | ".join(cells) + " |")
    lines += ["", "The stop-idle row is the getting-started demo (the in-memory fake fleet).", ""]
    OUT.write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
