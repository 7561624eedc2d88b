"""deploy/grafana/gpuplan-dashboard.json: every query parses as PromQL and reads only
metrics and labels the exporter emits; the layout is a valid Grafana grid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.queries import exported_labels, label_names, metric_names

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "gpuplan-dashboard.json"


def _dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return loaded


def _queries() -> list[tuple[str, str]]:
    return [
        (panel["title"], target["expr"])
        for panel in _dashboard()["panels"]
        for target in panel["targets"]
    ]


@pytest.mark.parametrize(("title", "expr"), _queries(), ids=[t for t, _ in _queries()])
def test_each_query_reads_only_what_the_exporter_emits(title: str, expr: str) -> None:
    emitted = exported_labels()
    names = metric_names(expr)
    assert names and names <= set(emitted), f"{title}: {names - set(emitted)} not exported"
    allowed = set().union(*(emitted[n] for n in names))
    assert label_names(expr) <= allowed, f"{title}: labels {label_names(expr) - allowed}"


def test_the_policy_variable_lists_an_exported_metric() -> None:
    variable = next(v for v in _dashboard()["templating"]["list"] if v["name"] == "policy")
    metric = variable["query"].removeprefix("label_values(").split(",")[0]
    assert "policy" in exported_labels()[metric]


def test_the_panels_tile_the_grid() -> None:
    panels = _dashboard()["panels"]
    assert len({p["id"] for p in panels}) == len(panels)
    cells: set[tuple[int, int]] = set()
    for p in panels:
        g = p["gridPos"]
        assert g["x"] >= 0 and g["x"] + g["w"] <= 24, p["title"]
        mine = {
            (x, y) for x in range(g["x"], g["x"] + g["w"]) for y in range(g["y"], g["y"] + g["h"])
        }
        assert not cells & mine, f"{p['title']} overlaps another panel"
        cells |= mine


def test_the_dashboard_shows_what_the_issue_asks() -> None:
    """Waste dollars by team, idle GPUs over time, budget burn, actions."""
    text = " ".join(expr for _, expr in _queries())
    for needed in ('verdict="idle"', "by (team)", "gpuplan_budget_forecast_dollars",
                   "gpuplan_actions_total", "gpuplan_gpus"):  # fmt: skip
        assert needed in text


def test_the_rendered_sample_names_only_exported_metrics() -> None:
    """docs/img/grafana-dashboard.png is drawn from deploy/grafana/sample-series.yaml:
    its series are the exporter's metrics with the exporter's labels."""
    import yaml

    from tests.deploy.promql_eval import parse_series

    emitted = exported_labels()
    recorded = yaml.safe_load((DASHBOARD.parent / "sample-series.yaml").read_text())
    for entry in recorded["series"]:
        labels = dict(parse_series(entry["series"], entry["values"]).labels)
        name = labels.pop("__name__")
        assert name in emitted and set(labels) == emitted[name], entry["series"]
