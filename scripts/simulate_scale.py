"""The default policy at fleet scale: 10, 100 and 1,000 instances, four trace sets.

Run: python scripts/simulate_scale.py [--sizes 10,100,1000] [--hours 168]

Prints the markdown table of docs/simulation.md ("At fleet scale"): for each trace set
and size, stops, harmful stops, share of the perfect and window oracles, runs aborted by
the circuit breaker, runs that reached the action cap and the stops they deferred. Trace
sets: the built-in generator (seed 7), the adversarial generator (seed 2026), the same on
a team's weekly clock (``--office``, seed 5) and that week with a 4-hour metrics outage
at hour 62 (every agent reports zeros). The adversarial sets are written by
scripts/adversarial_traces.py into a temporary folder and read back as
``gpuplan simulate --traces DIR`` would. Fields this version does not report print "-",
so the same script measures an older checkout (``PYTHONPATH=/path/to/checkout``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from gpuplan.core.lifecycle.idle import IdleRule
from gpuplan.loaders.catalog import load_catalog
from gpuplan.usecases.clouds.entries import register_facts
from gpuplan.usecases.lifecycle.simulate import (
    action_settings,
    folder_fleet,
    result_record,
    run,
    seeded_fleet,
)

register_facts()  # every listed cloud's facts, as the CLI registers them first

HEADER = (
    "| trace set | instances | stops | harmful stops | % of perfect oracle | "
    "% of window oracle | aborted runs | capped runs (stops deferred) | seconds |"
)
SCRIPTS = Path(__file__).resolve().parent
SETS = (
    ("generated (seed 7)", []),
    ("adversarial (seed 2026)", ["--seed", "2026"]),
    ("office week (seed 5)", ["--seed", "5", "--office"]),
    ("office week, metrics outage", ["--seed", "5", "--office", "--outage", "62:240"]),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--hours", type=int, default=168)
    parser.add_argument("--sets", default="", help="only the sets whose name has this text")
    args = parser.parse_args()
    catalog = load_catalog()
    actions = action_settings(None)
    print(HEADER)
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, flags in SETS:
        if args.sets not in name:
            continue
        for size in (int(s) for s in args.sizes.split(",")):
            started = time.perf_counter()
            with tempfile.TemporaryDirectory() as tmp:
                if flags:
                    subprocess.run(
                        [sys.executable, str(SCRIPTS / "adversarial_traces.py"), tmp,
                         "--instances", str(size), "--hours", str(args.hours), *flags],
                        check=True, capture_output=True,
                    )  # fmt: skip
                    fleet = folder_fleet(Path(tmp), catalog, IdleRule())
                else:
                    fleet = seeded_fleet(catalog, seed=7, instances=size, hours=args.hours)
                record = result_record(run(fleet, IdleRule(), 10, actions))
            print(_row(name, record, time.perf_counter() - started), flush=True)
    return 0


def _row(name: str, r: dict[str, Any], seconds: float) -> str:
    capped = f"{r['deferred_runs']} ({r['deferrals']})" if "deferred_runs" in r else "-"
    return (
        f"| {name} | {r['instances']:,} | {r['stop_count']:,} | {r['harmful_stops']} | "
        f"{_pct(r['share_of_perfect_oracle'])} | {_pct(r['share_of_window_oracle'])} | "
        f"{r['aborted_runs']} | {capped} | {seconds:.0f} |"
    )


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


if __name__ == "__main__":
    raise SystemExit(main())
