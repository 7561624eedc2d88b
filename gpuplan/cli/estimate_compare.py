"""Renders ``gpuplan estimate --compare-gpus``: one row per GPU generation, and its JSON."""

from __future__ import annotations

import json
import sys
from typing import Any

from gpuplan.cli.estimate_render import Fx, _hours, _money
from gpuplan.cli.render import format_count, render_table, to_jsonable, wrap
from gpuplan.core.planner.compare import Comparison, compare
from gpuplan.core.planner.explain import assumption_lines
from gpuplan.core.planner.options import PlanResult


def comparison_record(result: PlanResult, gpus: tuple[str, ...]) -> dict[str, Any]:
    rows = compare(result, gpus)
    return {
        "compare": [_record(r) for r in rows],
        "reference_gpu": next((r.gpu for r in rows if r.hours is not None), None),
        "assumptions": assumption_lines(result),
    }


def _record(row: Comparison) -> dict[str, Any]:
    return {
        "gpu": row.gpu,
        "gpus": row.gpus or None,
        "feasible": row.hours is not None,
        "hours": row.hours,
        "days": None if row.hours is None else row.hours / 24,
        "gpu_hours": row.gpu_hours,
        "cost_usd": row.cost_usd,
        "cheapest_pricing": row.cheapest_pricing,
        "peak_tflops": row.peak_tflops,
        "mfu": row.mfu,
        "speedup_vs_reference": row.speedup,
        "why": row.why,
        "reasons": list(row.reasons),
    }


def print_comparison(result: PlanResult, gpus: tuple[str, ...], fx: Fx, *, as_json: bool) -> None:
    if as_json:
        record = comparison_record(result, gpus)
        sys.stdout.write(json.dumps(to_jsonable(record), indent=2) + "\n")
        return
    code = fx[0] if fx else "USD"
    headers = ["GPU x count", "wall time", "GPU-h", f"cheapest {code}", "speed", "why"]
    rows = [
        [
            f"{r.gpu} x {format_count(r.gpus)}" if r.gpus else r.gpu,
            _hours(r.hours),
            f"{r.gpu_hours:,.0f}" if r.gpu_hours is not None else "-",
            _money(r.cost_usd, fx) + (f" {r.cheapest_pricing}" if r.cheapest_pricing else ""),
            f"x{r.speedup:.2f}" if r.speedup is not None else "-",
            r.why,
        ]
        for r in compare(result, gpus)
    ]
    right = [False, True, True, True, True, False]
    # GPU-hours, then speed, go first; the reason wraps.
    print(render_table(headers, rows, align_right=right, drop=(2, 4), wrap_last=True))
    print(
        "\n"
        + wrap(
            "wall time on demand (no spot interruptions); cheapest: any pricing model; speed: "
            "the first feasible GPU's time over this one's, same GPU count; why: dense peak x "
            "steady-state MFU, and the factor that differs most (docs/estimating.md)."
        )
    )
