"""A static rendering of deploy/grafana/gpuplan-dashboard.json: docs/img/grafana-dashboard.png.

Grafana is not installable here, so each panel's queries are evaluated by the same
PromQL evaluator the alert-rule tests use (``tests/deploy/promql_eval.py``, on
``promql_parser``) over the recorded series in ``deploy/grafana/sample-series.yaml``,
and drawn with matplotlib on the dashboard's own grid (stat panels as the last value,
time series as lines or stacked areas, legends from ``legendFormat``). What it shows is
what the dashboard's queries compute; the look is not Grafana's.

Run: ``python scripts/render_dashboard.py`` (needs the ``docs`` and ``test`` extras).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.deploy.promql_eval import Evaluator, duration_seconds, parse_series  # noqa: E402

DASHBOARD = ROOT / "deploy" / "grafana" / "gpuplan-dashboard.json"
SERIES = ROOT / "deploy" / "grafana" / "sample-series.yaml"
OUT = ROOT / "docs" / "img" / "grafana-dashboard.png"
Labels = tuple[tuple[str, str], ...]


def _legend(fmt: str, labels: Labels) -> str:
    values = dict(labels)
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: values.get(m.group(1), ""), fmt) or "value"


def _format(value: float, unit: str) -> str:
    if unit == "currencyUSD":
        return f"${value:,.2f}"
    if unit == "percentunit":
        return f"{value:.0%}"
    if unit == "s":
        return f"{value / 60:.0f} min"
    return f"{value:,.0f}"


def _series(ev: Evaluator, expr: str, times: list[float]) -> dict[Labels, list[float]]:
    out: dict[Labels, list[float]] = {}
    for i, t in enumerate(times):
        result = ev.query(expr.replace("$policy", ".*"), t)
        points = result if isinstance(result, dict) else {(): result}
        for labels, value in points.items():
            out.setdefault(labels, [float("nan")] * len(times))[i] = value
    return out


def main() -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dash: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    recorded = yaml.safe_load(SERIES.read_text(encoding="utf-8"))
    step = duration_seconds(recorded["interval"])
    series = [parse_series(s["series"], s["values"]) for s in recorded["series"]]
    ev = Evaluator(series, step)
    count = min(len(s.values) for s in series)
    times = [i * step for i in range(count)]
    hours = [t / 3600 for t in times]
    rows = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in dash["panels"])
    fig = plt.figure(figsize=(16, rows * 0.42))
    fig.suptitle(f"{dash['title']}  (static rendering of recorded series)", fontsize=13)
    grid = fig.add_gridspec(rows, 24, hspace=4.0, wspace=1.2)
    for panel in dash["panels"]:
        g = panel["gridPos"]
        ax = fig.add_subplot(grid[g["y"] : g["y"] + g["h"], g["x"] : g["x"] + g["w"]])
        ax.set_title(panel["title"], fontsize=9, loc="left")
        unit = panel["fieldConfig"]["defaults"].get("unit", "short")
        if panel["type"] == "stat":
            result = ev.query(panel["targets"][0]["expr"].replace("$policy", ".*"), times[-1])
            value = sum(result.values()) if isinstance(result, dict) else result
            ax.text(0.5, 0.4, _format(value, unit), ha="center", va="center", fontsize=20)
            ax.axis("off")
            continue
        stacked = panel["fieldConfig"]["defaults"]["custom"]["stacking"]["mode"] == "normal"
        for target in panel["targets"]:
            lines = _series(ev, target["expr"], times)
            labels = [_legend(target.get("legendFormat", ""), k) for k in lines]
            values = [[0.0 if v != v else v for v in vs] for vs in lines.values()]
            if stacked and values:
                ax.stackplot(hours, values, labels=labels, alpha=0.6)
            else:
                for label, vs in zip(labels, values, strict=True):
                    ax.plot(hours, vs, label=label)
        ax.set_xlabel("hours", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=6, loc="upper left")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(OUT, dpi=80, bbox_inches="tight")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
