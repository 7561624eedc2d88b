"""Sweep the idle policy over the default simulated fleet and an adversarial trace set;
write results and a plot.

Run: python scripts/simulate_sweep.py   (needs the docs extra: pip install -e '.[docs]')

Writes benchmarks/results/simulation.md (the default policy on both trace sets, then a
table per setting: window x live-process window at threshold 5%, and thresholds 2% and
10% around the default windows, with the date and the
machine) and docs/img/simulation-tradeoff.png (live-process window vs share of the
perfect oracle and harmful stops, one line per window, at the default threshold).

The adversarial set is written by scripts/adversarial_traces.py (a second generator with
other distributions, 1-minute rows, jitter and gaps) into a temporary folder and read
back through the v2 loader, as `gpuplan simulate --traces DIR` would.
"""

from __future__ import annotations

import platform
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpuplan.core.lifecycle.idle import IdleRule
from gpuplan.core.lifecycle.simulation.replay import SimulationResult
from gpuplan.loaders.catalog import load_catalog
from gpuplan.usecases.clouds.entries import register_facts
from gpuplan.usecases.lifecycle.simulate import (
    action_settings,
    folder_fleet,
    result_record,
    run,
    seeded_fleet,
    sweep,
)

register_facts()  # every listed cloud's facts, as the CLI registers them first

ROOT = Path(__file__).resolve().parent.parent
SEED, INSTANCES, HOURS = 7, 80, 168
ADVERSARIAL_SEEDS = (2026, 11, 12)
DEFAULT_INTERVAL = 10


def main() -> int:
    catalog = load_catalog()
    fleet = seeded_fleet(catalog, seed=SEED, instances=INSTANCES, hours=HOURS)
    actions = action_settings(None)
    started = time.perf_counter()
    default = run(fleet, IdleRule(), DEFAULT_INTERVAL, actions)
    blind = run(fleet, IdleRule(live_process_window_minutes=60), DEFAULT_INTERVAL, actions)
    adversarial = [_adversarial(catalog, seed, actions) for seed in ADVERSARIAL_SEEDS]
    progress = lambda d, t: print(f"\r{d}/{t}", end="", file=sys.stderr, flush=True)  # noqa: E731
    results = sweep(fleet, IdleRule(), thresholds=(5.0,), actions=actions, progress=progress)
    results += sweep(fleet, IdleRule(), windows=(60,), live_windows=(150, 180),
                     thresholds=(2.0, 10.0), actions=actions)  # fmt: skip
    elapsed = time.perf_counter() - started
    records = [result_record(r) for r in results]
    write_markdown(default, blind, adversarial, records, elapsed)
    plot(records)
    print("\nwrote benchmarks/results/simulation.md and docs/img/simulation-tradeoff.png")
    return 0


def _adversarial(catalog: Any, seed: int, actions: Any) -> tuple[int, SimulationResult]:
    with tempfile.TemporaryDirectory() as folder:
        script = ROOT / "scripts/adversarial_traces.py"
        subprocess.run([sys.executable, str(script), folder, "--seed", str(seed)], check=True,
                       capture_output=True)  # fmt: skip
        traces = folder_fleet(Path(folder), catalog, IdleRule())
    return seed, run(traces, IdleRule(), DEFAULT_INTERVAL, actions)


def _pct(value: object) -> str:
    return "-" if value is None else f"{100 * float(str(value)):.1f}%"


def _summary(name: str, result: SimulationResult) -> str:
    r = result_record(result)
    harmful = Counter(s.label for t in result.traces for s in t.stops if s.false_stop).most_common(
        4
    )
    where = f" ({', '.join(f'{label}: {n}' for label, n in harmful)})" if harmful else ""
    return (
        f"| {name} | {r['instances']} | {r['stop_count']} | {r['harmful_stops']}{where} "
        f"| {_pct(r['share_of_perfect_oracle'])} | {_pct(r['share_of_window_oracle'])} "
        f"| {r['aborted_runs']} |"
    )


def write_markdown(
    default: SimulationResult,
    blind: SimulationResult,
    adversarial: list[tuple[int, SimulationResult]],
    records: list[dict[str, Any]],
    elapsed: float,
) -> None:
    lines = [
        "# Idle-savings simulation",
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()} "
        f"({platform.python_implementation()} {platform.python_version()}), "
        f"`python scripts/simulate_sweep.py`; took {elapsed:.0f} s.",
        "",
        f"Generated fleet: seed {SEED}, {INSTANCES} instances x {HOURS} h (one week), class "
        "mix in `gpuplan/core/lifecycle/simulation/traces.py`. Adversarial sets: "
        "`scripts/adversarial_traces.py --seed N` (90 instances x 168 h, 1-minute rows, "
        "other distributions, jitter, gaps). On-demand prices from the bundled catalog; "
        f"job every {DEFAULT_INTERVAL} min; `max_actions_per_run` 10 as in the default policy.",
        "",
        "## Default policy",
        "",
        "Window 60 min, live-process window 180 min, threshold 5%, GPU memory floor 1%, "
        "CPU busy 10%, period 5 min, coverage 80%.",
        "",
        "| trace set | instances | stops | harmful stops | % of perfect oracle "
        "| % of window oracle | aborted runs |",
        "|---|---:|---:|---:|---:|---:|---:|",
        _summary("generated (seed 7)", default),
        _summary("generated, utilisation only (live window = 60)", blind),
        *(_summary(f"adversarial (seed {seed})", r) for seed, r in adversarial),
        "",
        "## Sweep (generated fleet)",
        "",
        "| window | live window | threshold % | stops | harmful stops | saved $ "
        "| % of window oracle | % of perfect oracle | busy $ disrupted |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in records:
        lines.append(
            f"| {r['window_minutes']}m | {r['live_process_window_minutes']}m "
            f"| {r['threshold_percent']:g} | {r['stop_count']} | {r['harmful_stops']} "
            f"| {r['saved_usd']:,} | {_pct(r['share_of_window_oracle'])} "
            f"| {_pct(r['share_of_perfect_oracle'])} | {r['disrupted_usd']:,} |"
        )
    (ROOT / "benchmarks/results").mkdir(parents=True, exist_ok=True)
    (ROOT / "benchmarks/results/simulation.md").write_text("\n".join(lines) + "\n")


def plot(records: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for window in sorted({r["window_minutes"] for r in records}):
        rows = [
            r for r in records if r["window_minutes"] == window and r["threshold_percent"] == 5.0
        ]
        xs = [r["live_process_window_minutes"] for r in rows]
        label = f"window {window} min"
        ax1.plot(xs, [100 * r["share_of_perfect_oracle"] for r in rows], marker="o", label=label)
        ax2.plot(xs, [r["harmful_stops"] for r in rows], marker="o", label=label)
    ax1.set(xlabel="live-process window (min)", ylabel="% of perfect oracle", title="Savings")
    ax2.set(
        xlabel="live-process window (min)",
        ylabel="harmful stops (one week, 80 instances)",
        title="Risk: stops inside live sessions",
    )
    ax1.legend(fontsize=8)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    (ROOT / "docs/img").mkdir(parents=True, exist_ok=True)
    fig.savefig(ROOT / "docs/img/simulation-tradeoff.png", dpi=110)


if __name__ == "__main__":
    raise SystemExit(main())
