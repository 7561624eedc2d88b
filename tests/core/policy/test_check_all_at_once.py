"""``gpuplan policy check``: every error of a file at once, the data-loss decision stated,
and warnings on settings the simulator shows are dangerous (issue 26 item 7, issue 25)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuplan.cli.main import main

STATED = """\
version: 1
name: team-a
scope:
  aws: {regions: [us-east-1]}
  azure: {subscriptions: [00000000-0000-0000-0000-000000000001]}
idle:
  allow_data_loss: false
"""
TEN_MISTAKES = """\
version: 1
name: team-a
scope:
  aws: {regions: [us-east-1]}
budget:
  monthly_usd: -5
  whatever: 2
planning:
  allowed_pricing: [sometimes]
idle:
  allow_data_loss: maybe
  threshold_percent: 150
  window_minutes: 2x
  grace_minutes: -3
  frobnicate: 1
  action: bogus
  max_actions_per_run: 0
"""
Write = Callable[[str | bytes, str], Path]


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["policy", "check", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_ten_mistakes_are_reported_in_one_run(
    write_policy: Write, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_policy(TEN_MISTAKES, "ten.yaml")
    code, _, err = check(capsys, str(path))
    errors = [ln for ln in err.splitlines() if ln.startswith("gpuplan: error: ")]
    assert code == 2 and len(errors) == 10, err
    assert [ln.split(": ")[3] for ln in errors] == [
        "budget.monthly_usd",
        "budget.whatever",
        "planning.allowed_pricing[0]",
        "idle.allow_data_loss",
        "idle.threshold_percent",
        "idle.window_minutes",
        "idle.grace_minutes",
        "idle.frobnicate",
        "idle.action",
        "idle.max_actions_per_run",
    ]
    code, out, _ = check(capsys, "--json", str(path))
    [record] = json.loads(out)
    assert code == 2 and len(record["errors"]) == len(errors)


def test_a_rule_error_is_reported_with_field_errors(
    write_policy: Write, capsys: pytest.CaptureFixture[str]
) -> None:
    # On main the rules across keys were only checked once every field was valid.
    text = STATED + "  action: suspend\n  grace_minutes: x\n"
    code, _, err = check(capsys, str(write_policy(text, "two.yaml")))
    assert code == 2
    assert "idle.action: suspend is a GCP action" in err and "idle.grace_minutes" in err


def test_an_acting_policy_must_state_allow_data_loss(
    write_policy: Write, capsys: pytest.CaptureFixture[str]
) -> None:
    unstated = write_policy(STATED.replace("  allow_data_loss: false\n", "  action: stop\n"))
    code, _, err = check(capsys, str(unstated))
    [line] = [ln for ln in err.splitlines() if "allow_data_loss" in ln]
    assert code == 2 and f"{unstated}:6:" in line
    assert "AWS instance store" in line and "Azure temporary disk" in line
    assert "GCP" not in line  # only the clouds in scope
    for stated in ("false", "true"):
        path = write_policy(STATED.replace("false", stated), f"{stated}.yaml")
        assert check(capsys, str(path))[0] == 0


def test_notify_and_planning_only_policies_need_no_data_loss_decision(
    write_policy: Write, capsys: pytest.CaptureFixture[str]
) -> None:
    notify = STATED.replace("  allow_data_loss: false\n", "  action: notify\n")
    assert check(capsys, str(write_policy(notify, "n.yaml")))[0] == 0
    planning = "version: 1\nname: plan\nscope: {}\n"
    assert check(capsys, str(write_policy(planning, "p.yaml")))[0] == 0


def test_dangerous_settings_warn_one_line_each_and_pass(
    write_policy: Write, capsys: pytest.CaptureFixture[str]
) -> None:
    # On main this policy passed silently; it would stop an 8xH100 job running at 40%.
    text = STATED + "  threshold_percent: 50\n  window_minutes: 5\n  min_coverage_percent: 0\n"
    path = write_policy(text, "danger.yaml")
    code, out, err = check(capsys, str(path))
    warnings = [ln for ln in err.splitlines() if ln.startswith("gpuplan: warning: ")]
    assert code == 0 and f"{path}: ok" in out
    assert [w.split(": ")[3] for w in warnings] == [
        "idle.threshold_percent",
        "idle.window_minutes",
        "idle.min_coverage_percent",
    ]
    assert f"{path}:8:" in warnings[0]
    code, out, _ = check(capsys, "--json", str(path))
    [record] = json.loads(out)
    assert code == 0 and record["ok"] and len(record["warnings"]) == 3
