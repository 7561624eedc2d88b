"""Sweep the idle policy over the default simulated fleet; write results and a plot.

Run: python scripts/simulate_sweep.py   (needs the docs extra: pip install -e '.[docs]')

Writes benchmarks/results/simulation.md (a table per setting, with the date and the
machine) and docs/img/simulation-tradeoff.png (window length vs dollars saved vs false
stops, one line per schedule interval at the default threshold).
"""

from __future__ import annotations

import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from gpuplan.core.idle import IdleRule
from gpuplan.loaders.catalog import load_catalog
from gpuplan.usecases.simulate import result_record, run, seeded_fleet, sweep

ROOT = Path(__file__).resolve().parent.parent
SEED, INSTANCES, HOURS = 7, 60, 72
DEFAULT_INTERVAL = 10


def main() -> int:
    catalog = load_catalog()
    fleet = seeded_fleet(catalog, seed=SEED, instances=INSTANCES, hours=HOURS)
    started = time.perf_counter()
    default = result_record(run(fleet, IdleRule(), DEFAULT_INTERVAL))
    results = sweep(
        fleet,
        IdleRule(),
        progress=lambda d, t: print(f"\r{d}/{t}", end="", file=sys.stderr, flush=True),
    )
    elapsed = time.perf_counter() - started
    records = [result_record(r) for r in results]
    write_markdown(default, records, elapsed)
    plot(records)
    print("\nwrote benchmarks/results/simulation.md and docs/img/simulation-tradeoff.png")
    return 0


def _pct(value: object) -> str:
    return f"{100 * float(str(value)):.1f}%"


def write_markdown(
    default: dict[str, object], records: list[dict[str, object]], elapsed: float
) -> None:
    d = default
    lines = [
        "# Idle-savings simulation",
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()} "
        f"({platform.python_implementation()} {platform.python_version()}), "
        f"`python scripts/simulate_sweep.py`; sweep took {elapsed:.0f} s.",
        "",
        f"Fleet: seeded generator, seed {SEED}, {INSTANCES} instances x {HOURS} h, class mix "
        "and trace classes in `gpuplan/core/simulation/traces.py`, on-demand us-east-1 "
        "prices from the bundled catalog.",
        "",
        "## Default policy",
        "",
        "Window 60 min, threshold 5%, period 5 min, coverage 80%, "
        f"job every {DEFAULT_INTERVAL} min (deploy/crontab).",
        "",
        f"- saved: ${d['saved_usd']:,} of ${d['window_oracle_usd']:,} (window oracle) = "
        f"{_pct(d['share_of_window_oracle'])}",
        f"- perfect oracle: ${d['perfect_oracle_usd']:,}; share "
        f"{_pct(d['share_of_perfect_oracle'])}",
        f"- stops: {d['stops']}, false stops: {d['false_stops']}",
        "",
        "## Sweep",
        "",
        "| window | threshold % | every | stops | false stops | saved $ "
        "| % of window oracle | % of perfect oracle | busy $ disrupted |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in records:
        lines.append(
            f"| {r['window_minutes']}m | {r['threshold_percent']:g} | {r['interval_minutes']}m "
            f"| {r['stops']} | {r['false_stops']} | {r['saved_usd']:,} "
            f"| {_pct(r['share_of_window_oracle'])} | {_pct(r['share_of_perfect_oracle'])} "
            f"| {r['disrupted_usd']:,} |"
        )
    (ROOT / "benchmarks/results").mkdir(parents=True, exist_ok=True)
    (ROOT / "benchmarks/results/simulation.md").write_text("\n".join(lines) + "\n")


def plot(records: list[dict[str, object]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for interval in sorted({r["interval_minutes"] for r in records}):  # type: ignore[type-var]
        rows = [
            r
            for r in records
            if r["interval_minutes"] == interval and r["threshold_percent"] == 5.0
        ]
        xs = [r["window_minutes"] for r in rows]
        ax1.plot(
            xs, [float(r["saved_usd"]) for r in rows], marker="o", label=f"job every {interval} min"
        )  # type: ignore[arg-type]
        ax2.plot(
            xs, [r["false_stops"] for r in rows], marker="o", label=f"job every {interval} min"
        )
    perfect = float(records[0]["perfect_oracle_usd"])  # type: ignore[arg-type]
    ax1.axhline(perfect, linestyle="--", color="grey", label="perfect oracle")
    ax1.set(
        xlabel="idle window (min)", ylabel="dollars saved (72 h, 60 instances)", title="Savings"
    )
    ax2.set(
        xlabel="idle window (min)", ylabel="false stops", title="Risk: stops inside busy pauses"
    )
    ax1.legend(fontsize=8)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    (ROOT / "docs/img").mkdir(parents=True, exist_ok=True)
    fig.savefig(ROOT / "docs/img/simulation-tradeoff.png", dpi=110)


if __name__ == "__main__":
    raise SystemExit(main())
