"""The default policy through metric outages: whole fleet or part of it, every signal or
GPU utilisation only, on a team's week at 100 and 1,000 instances.

Run: python scripts/simulate_outages.py [--sizes 100,1000] [--hours 168]
        [--shares 0.3,0.5,0.8,1] [--kinds all,gpu] [--at 62:240]

Prints the markdown table of docs/simulation.md ("Metric outages"): per scenario, stops,
harmful stops (stops inside a busy-labelled stretch: during the outage, and after it at
every scheduled run, +10, +20 ... min, so +10/+30/+60 are among them), the share of the
perfect oracle and the runs the breaker aborted. The traces are written by
scripts/adversarial_traces.py (``--office --seed 5 --outage H:M --outage-share S
--outage-kind K``) into a temporary folder and read back as ``gpuplan simulate --traces``
would. Fields this version does not report print "-", so the same script measures an
older checkout (``PYTHONPATH=/path/to/checkout``, run from outside the worktree).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpuplan.core.lifecycle.idle import IdleRule
from gpuplan.loaders.catalog import load_catalog
from gpuplan.usecases.clouds.entries import register_facts
from gpuplan.usecases.lifecycle.simulate import action_settings, folder_fleet, result_record, run

register_facts()  # every listed cloud's facts, as the CLI registers them first

SCRIPT = Path(__file__).resolve().parent / "adversarial_traces.py"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100")
    parser.add_argument("--hours", type=int, default=168)
    parser.add_argument("--shares", default="0.3,0.5,0.8,1")
    parser.add_argument("--kinds", default="all,gpu")
    parser.add_argument("--at", default="62:240", help="HOUR:MINUTES of the outage")
    args = parser.parse_args()
    catalog = load_catalog()
    actions = action_settings(None)
    print("| outage | share | instances | stops | harmful stops | % of perfect oracle "
          "| aborted runs | seconds |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for size in (int(s) for s in args.sizes.split(",")):
        for kind in args.kinds.split(","):
            for share in args.shares.split(","):
                started = time.perf_counter()
                with tempfile.TemporaryDirectory() as tmp:
                    flags = ["--office", "--seed", "5", "--instances", str(size), "--hours",
                             str(args.hours), "--outage", args.at, "--outage-share", share,
                             "--outage-kind", kind]  # fmt: skip
                    subprocess.run([sys.executable, str(SCRIPT), tmp, *flags], check=True,
                                   capture_output=True)  # fmt: skip
                    fleet = folder_fleet(Path(tmp), catalog, IdleRule())
                    r = result_record(run(fleet, IdleRule(), 10, actions))
                name = "every signal 0" if kind == "all" else "GPU utilisation 0 only"
                print(
                    f"| {name} | {100 * float(share):.0f}% | {r['instances']:,} "
                    f"| {r['stop_count']:,} | {r['harmful_stops']} "
                    f"| {100 * r['share_of_perfect_oracle']:.1f}% | {r['aborted_runs']} "
                    f"| {time.perf_counter() - started:.0f} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
