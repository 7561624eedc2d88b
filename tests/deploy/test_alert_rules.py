"""deploy/prometheus/gpuplan-rules.yaml: the rules parse, name only metrics the exporter
emits, and each alert fires on its recorded series (and stays quiet where it should).

The recorded series and expected alerts are promtool's own test file
(``gpuplan-rules.test.yaml``): ``promtool test rules`` runs it where the binary is
installed; everywhere, the same expressions are evaluated here in Python
(``promql_eval``) against the same series and the same expectations.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import promql_parser as pq
import pytest
import yaml

from tests.deploy.promql_eval import Evaluator, duration_seconds, parse_series, parse_values
from tests.deploy.queries import exported_names, metric_names

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "gpuplan-rules.yaml"
TESTS = ROOT / "deploy" / "prometheus" / "gpuplan-rules.test.yaml"


def _rules() -> list[dict[str, Any]]:
    doc = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    return [rule for group in doc["groups"] for rule in group["rules"]]


def _cases() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    doc = yaml.safe_load(TESTS.read_text(encoding="utf-8"))
    return [(test, check) for test in doc["tests"] for check in test["alert_rule_test"]]


def test_every_rule_parses_and_names_only_exported_metrics() -> None:
    names = exported_names()
    for rule in _rules():
        pq.parse(rule["expr"])  # raises on a PromQL syntax error
        used = metric_names(rule["expr"])
        assert used, rule["alert"]
        assert used <= names, f"{rule['alert']} names {used - names}, not exported"


def test_every_alert_has_a_firing_and_a_quiet_case() -> None:
    fired = {c["alertname"] for _, c in _cases() if c["exp_alerts"]}
    quiet = {c["alertname"] for _, c in _cases() if not c["exp_alerts"]}
    alerts = {rule["alert"] for rule in _rules()}
    assert alerts == fired == quiet


def _firing(rule: dict[str, Any], ev: Evaluator, at: float, step: float) -> set[frozenset[Any]]:
    """Label sets of ``rule``'s alerts firing at ``at``: true at every evaluation over
    the ``for`` duration, as Prometheus's pending -> firing works."""
    hold = duration_seconds(rule.get("for", "0s")) if rule.get("for") else 0.0
    times = [at - k * step for k in range(int(hold // step) + 1)]
    sets: set[frozenset[Any]] | None = None
    for t in times:
        result = ev.query(rule["expr"], t)
        assert isinstance(result, dict)
        now = {
            frozenset({**dict(k for k in labels if k[0] != "__name__"),
                       **rule.get("labels", {})}.items())
            for labels in result
        }  # fmt: skip
        sets = now if sets is None else sets & now
    return sets or set()


@pytest.mark.parametrize(
    ("test", "check"), _cases(), ids=[f"{c['alertname']}@{c['eval_time']}" for _, c in _cases()]
)
def test_alert_fires_on_the_recorded_series(test: dict[str, Any], check: dict[str, Any]) -> None:
    step = duration_seconds(test.get("interval", "1m"))
    series = [parse_series(s["series"], s["values"]) for s in test["input_series"]]
    rule = next(r for r in _rules() if r["alert"] == check["alertname"])
    got = _firing(rule, Evaluator(series, step), duration_seconds(check["eval_time"]), step)
    wanted = {frozenset(a["exp_labels"].items()) for a in check["exp_alerts"]}
    assert got == wanted


def test_the_series_notation_is_read_as_promtool_reads_it() -> None:
    assert parse_values("1+2x3 _ 5x1 -1-1x1") == [1, 3, 5, 7, None, 5, 5, -1, -2]


def test_a_rule_with_an_unsupported_construct_fails_loudly() -> None:
    ev = Evaluator([parse_series("x", "1x3")], 60.0)
    with pytest.raises(NotImplementedError):
        ev.query("rate(x[5m])", 120.0)


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed here")
def test_promtool_checks_and_tests_the_rules() -> None:
    folder = RULES.parent
    for args in (["check", "rules", RULES.name], ["test", "rules", TESTS.name]):
        done = subprocess.run(
            ["promtool", *args], cwd=folder, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stdout + done.stderr
