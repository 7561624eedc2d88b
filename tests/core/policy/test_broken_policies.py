"""A table of broken policy files: each is refused with a short error naming file and line.

Run through the CLI in-process (``main([...])``), plus one subprocess run of the real
entry point, so a traceback anywhere would show.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from tests.fakes.policy_fixtures import VALID

BASE = (
    VALID  # lines: 1 version, 2 name, 3 scope, 4 aws, 5 budget, 6 monthly_usd, 7 idle, 8 threshold
)


def edit(old: str, new: str) -> str:
    assert old in BASE, old
    return BASE.replace(old, new)


# (id, file content, expected line (None: no line), text the error must contain)
CASES: list[tuple[str, str | bytes, int | None, str]] = [
    (
        "threshold-out-of-range",
        edit("threshold_percent: 5", "threshold_percent: 150"),
        8,
        "idle.threshold_percent: must be between 0 and 100, got 150",
    ),
    (
        "threshold-as-text",
        edit("threshold_percent: 5", "threshold_percent: five"),
        8,
        "idle.threshold_percent: expected a number, got 'five'",
    ),
    (
        "threshold-as-bool",
        edit("threshold_percent: 5", "threshold_percent: true"),
        8,
        "expected a number, got true",
    ),
    (
        "negative-budget",
        edit("monthly_usd: 1000", "monthly_usd: -100"),
        6,
        "budget.monthly_usd: must be more than 0 USD, got -100",
    ),
    (
        "budget-as-text",
        edit("monthly_usd: 1000", "monthly_usd: lots"),
        6,
        "budget.monthly_usd: expected an amount in USD",
    ),
    ("unknown-top-key", BASE + "budgets: {}\n", 9, "budgets: unknown key; did you mean 'budget'"),
    (
        "unknown-nested-key",
        edit("threshold_percent: 5", "treshold_percent: 5"),
        8,
        "idle.treshold_percent: unknown key; did you mean 'threshold_percent'",
    ),
    (
        "bad-duration",
        BASE + "  window_minutes: 90x\n",
        9,
        "idle.window_minutes: expected a duration in minutes",
    ),
    (
        "negative-duration",
        BASE + "  grace_minutes: -30\n",
        9,
        "idle.grace_minutes: must not be negative",
    ),
    (
        "window-not-whole-periods",
        BASE + "  window_minutes: 62\n",
        9,
        "idle.window_minutes: must be a whole number of periods of 5 minutes",
    ),
    (
        "window-below-period",
        BASE + "  window_minutes: 10\n  period_minutes: 15m\n",
        9,
        "idle.window_minutes: must be at least period_minutes",
    ),
    (
        "coverage-out-of-range",
        BASE + "  min_coverage_percent: 120\n",
        9,
        "idle.min_coverage_percent: must be between 0 and 100",
    ),
    (
        "alert-zero",
        edit("monthly_usd: 1000", "monthly_usd: 1000\n  alert_at_percent: [50, 0]"),
        7,
        "budget.alert_at_percent[1]: must be between 1 and 1000, got 0",
    ),
    (
        "alert-twice",
        edit("monthly_usd: 1000", "monthly_usd: 1000\n  alert_at_percent: [50, 50]"),
        7,
        "budget.alert_at_percent[1]: 50 appears twice",
    ),
    (
        "bad-action",
        BASE + "  action: explode\n",
        9,
        "idle.action: must be one of stop, hibernate, suspend, terminate or notify",
    ),
    (
        "suspend-aws-only",
        BASE + "  action: suspend\n",
        9,
        "idle.action: suspend is a GCP action, but the scope also names aws",
    ),
    (
        "data-loss-as-text",
        BASE + "  allow_data_loss: 'yes'\n",
        9,
        "idle.allow_data_loss: expected true or false",
    ),
    (
        "zero-actions",
        BASE + "  max_actions_per_run: 0\n",
        9,
        "idle.max_actions_per_run: must be at least 1",
    ),
    ("version-2", edit("version: 1", "version: 2"), 1, "version: unsupported policy version 2"),
    ("missing-name", edit("name: team-a\n", ""), 1, "name: required key is missing"),
    ("bad-name", edit("name: team-a", "name: Team A"), 2, "'Team A' is not a policy name"),
    (
        "label-with-colon",
        edit("scope:\n", "scope:\n  match_labels: {'aws:team': x}\n"),
        4,
        "'aws:team' is not a tag or label name valid on every cloud",
    ),
    ("bad-exempt-tag", BASE + "  exempt_tag: Keep-Me\n", 9, "idle.exempt_tag: 'Keep-Me' is not"),
    ("yaml-syntax", edit("regions: [us-east-1]}", "regions: [us-east-1}"), 4, "not valid YAML"),
    ("tab-indent", edit("  threshold_percent", "\tthreshold_percent"), 8, "tab in indentation"),
    (
        "duplicate-key",
        BASE + "budget: {monthly_usd: 5}\n",
        9,
        "budget: duplicate key (first at line 5)",
    ),
    ("empty-file", "", None, "empty file"),
    ("only-comments", "# nothing here\n---\n", 1, "no policy in this file"),
    ("binary-garbage", bytes(range(256)) * 4, None, "binary data"),
    ("latin-1-bytes", "name: caf\xe9\n".encode("latin-1"), None, "not UTF-8 text"),
    (
        "list-where-map",
        edit("scope:\n  aws: {regions: [us-east-1]}", "scope: [aws]"),
        3,
        "scope: expected a mapping (key: value), got a list",
    ),
    ("top-level-list", "- version: 1\n- name: x\n", 1, "expected a mapping of policy keys"),
    (
        "unknown-gpu",
        BASE + "planning: {allowed_gpus: [H100, H10]}\n",
        9,
        "planning.allowed_gpus[1]: unknown GPU 'H10'; close matches",
    ),
    (
        "ambiguous-gpu",
        BASE + "planning: {allowed_gpus: [A100]}\n",
        9,
        "planning.allowed_gpus[0]: GPU name 'A100' is ambiguous",
    ),
    (
        "bad-pricing",
        BASE + "planning: {allowed_pricing: [cheap]}\n",
        9,
        "planning.allowed_pricing[0]: must be one of on_demand, spot",
    ),
    (
        "azure-subscription",
        edit("aws: {regions: [us-east-1]}", "azure: {subscriptions: [abc]}"),
        4,
        "'abc' is not an Azure subscription id",
    ),
    (
        "empty-regions",
        edit("regions: [us-east-1]", "regions: []"),
        4,
        "scope.aws.regions: must not be empty",
    ),
    (
        "unset-webhook-env",
        BASE + "notify: {webhook_url: '${GPUPLAN_TEST_UNSET_HOOK}'}\n",
        9,
        "environment variable GPUPLAN_TEST_UNSET_HOOK is not set",
    ),
    (
        "webhook-not-http",
        BASE + "notify: {webhook_url: 'ftp://example.org/x'}\n",
        9,
        "notify.webhook_url: expected an http:// or https:// URL",
    ),
    ("two-documents", BASE + "---\nversion: 1\n", 9, "expected a single document"),
    (
        "python-tag",
        BASE + "notify: !!python/object/apply:os.system ['echo hi']\n",
        9,
        "unsupported tag tag:yaml.org,2002:python/object/apply",
    ),
    (
        "python-scalar-tag",
        BASE + "notify: {webhook_url: !!python/name:os.system ''}\n",
        9,
        "not valid YAML: could not determine a constructor",
    ),
    ("deep-nesting", "[" * 1500 + "]" * 1500, 1, "nested more than 32 levels deep"),
    ("recursive-alias", BASE + "notify: &loop {x: *loop}\n", 9, "nested more than 32 levels"),
    (
        "huge-duration",
        BASE + "  window_minutes: 99999999h\n",
        9,
        "idle.window_minutes: must be at most 527040 minutes",
    ),
    ("control-character", BASE + "name2: \x08\n", 9, "character #x0008 is not allowed"),
    (
        "hourly-above-monthly",
        edit("monthly_usd: 1000", "monthly_usd: 10\n  max_hourly_usd: 50"),
        7,
        "budget.max_hourly_usd: is above monthly_usd",
    ),
]


def test_table_is_big_enough() -> None:
    assert len(CASES) >= 25
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize(
    ("content", "line", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_broken_policy_is_refused_with_place(
    content: str | bytes,
    line: int | None,
    expected: str,
    write_policy: Callable[[str | bytes, str], Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GPUPLAN_TEST_UNSET_HOOK", raising=False)
    path = write_policy(content, "broken.yaml")
    code = main(["policy", "check", str(path)])
    out, err = capsys.readouterr()
    assert code == 2
    assert "Traceback" not in err
    assert out == ""
    error_lines = [ln for ln in err.splitlines() if ln.startswith("gpuplan: error: ")]
    assert 1 <= len(error_lines) <= 4, err
    first = error_lines[0].removeprefix("gpuplan: error: ")
    where = f"{path}:{line}:" if line is not None else f"{path}: "
    assert first.startswith(where), err
    assert expected in err, err


def test_every_problem_in_a_file_is_placed(
    write_policy: Callable[[str | bytes, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    text = BASE + "  window_minutes: 2x\n  action: bogus\n  grace_minutes: x\n"
    path = write_policy(text.replace("monthly_usd: 1000", "monthly_usd: -1"), "many.yaml")
    assert main(["policy", "check", str(path)]) == 2
    err = capsys.readouterr().err
    lines = [ln.removeprefix("gpuplan: error: ") for ln in err.splitlines()]
    # Sorted by line, every one of them (issue 26: on main three, then "(and 1 more)").
    assert [ln.split(":")[1] for ln in lines[:4]] == ["6", "9", "10", "11"]
    assert "more problem" not in err


def test_check_reports_each_file_and_fails_if_any_fails(
    write_policy: Callable[[str | bytes, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    good = write_policy(BASE + "  allow_data_loss: false\n", "good.yaml")
    bad = write_policy(edit("threshold_percent: 5", "threshold_percent: 150"), "bad.yaml")
    missing = good.parent / "missing.yaml"
    assert main(["policy", "check", str(good), str(bad), str(missing)]) == 2
    out, err = capsys.readouterr()
    assert f"{good}: ok (policy team-a)" in out
    assert f"{bad}:8:22: idle.threshold_percent" in err
    assert f"{missing}: file not found" in err
    assert "2 of 3 policy files have errors" in err


def test_check_json_lists_errors(
    write_policy: Callable[[str | bytes, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    bad = write_policy(BASE + "  action: suspend\n", "bad.yaml")
    assert main(["policy", "check", "--json", str(bad)]) == 2
    [record] = json.loads(capsys.readouterr().out)
    assert record["ok"] is False
    assert record["errors"][0].startswith(f"{bad}:9:11: idle.action: suspend is a GCP action")


def test_subprocess_entry_point_prints_one_line_no_traceback(
    write_policy: Callable[[str | bytes, str], Path],
) -> None:
    path = write_policy(edit("threshold_percent: 5", "threshold_percent: 150"), "x.yaml")
    proc = subprocess.run(
        [sys.executable, "-m", "gpuplan", "policy", "check", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert f"{path}:8:22: idle.threshold_percent: must be between 0 and 100, got 150" in (
        proc.stderr
    )
