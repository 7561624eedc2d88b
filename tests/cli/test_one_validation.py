"""Every command that reads a policy refuses what ``gpuplan policy check`` refuses (issue 33).

On main, a policy without ``scope:`` or without ``idle.allow_data_loss`` next to a stop
action failed ``policy check`` (exit 2) while ``stop-idle`` and ``fleet`` ran it (exit 0,
the missing field read as false). Each command here runs through ``main()`` on moto with
an idle instance in scope: exit 2, the very error lines ``policy check`` prints, no AWS
call made, no ledger written, the instance untouched.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import botocore.client
import pytest
from freezegun import freeze_time

from gpuplan.cli.main import main
from tests.fakes.aws_world import NOW, World, flat

NO_SCOPE = """\
version: 1
name: research
idle: {threshold_percent: 5, allow_data_loss: true}
"""
UNSTATED = """\
version: 1
name: research
scope:
  aws: {regions: [us-east-1]}
idle:
  threshold_percent: 5
  action: stop
"""
BAD = {"no-scope": NO_SCOPE, "allow-data-loss-unstated": UNSTATED}

COMMANDS: dict[str, Callable[[str, str, Path], list[str]]] = {
    "stop-idle": lambda p, i, d: ["stop-idle", "--policy", p, "--apply", "--db", str(d)],
    "stop-idle dry run": lambda p, i, d: ["stop-idle", "--policy", p, "--db", str(d)],
    "fleet": lambda p, i, d: ["fleet", "--policy", p],
    "budget": lambda p, i, d: ["budget", "--policy", p, "--db", str(d)],
    "audit": lambda p, i, d: ["audit", "--policy", p],
    "snooze": lambda p, i, d: ["snooze", i, "--for", "4h", "--policy", p],
    "simulate": lambda p, i, d: ["simulate", "--policy", p, "--instances", "2", "--hours", "4"],
    "estimate --policy": lambda p, i, d: [
        *("estimate", "--params", "7B", "--tokens", "20B", "--policy", p, "--db", str(d)),
    ],
    "tui": lambda p, i, d: ["tui", "--policy", p],
}


@pytest.fixture
def aws_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every AWS API call any client makes (a spy: moto still answers each one)."""
    calls: list[str] = []
    original = botocore.client.BaseClient._make_api_call

    def spy(self: Any, operation: str, params: Any) -> Any:
        calls.append(operation)
        return original(self, operation, params)

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", spy)
    return calls


@pytest.mark.parametrize("bad", sorted(BAD))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_policy_check_refuses_is_refused_by_every_command(
    command: str,
    bad: str,
    world: World,
    tmp_path: Path,
    lc_catalog_dir: Path,
    aws_calls: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    iid = world.launch(tags={"team": "research"})
    world.publish(iid, flat(0.0))
    tags = world.tags(iid)
    policy = tmp_path / "policy.yaml"
    policy.write_text(BAD[bad], encoding="utf-8")
    monkeypatch.setenv("GPUPLAN_CATALOG_DIR", str(lc_catalog_dir))
    ledger = tmp_path / "ledger.db"
    assert main(["policy", "check", str(policy)]) == 2
    expected = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("gpuplan:")]
    assert expected and all(ln.startswith("gpuplan: error: ") for ln in expected)
    aws_calls.clear()
    with freeze_time(NOW):
        code = main(COMMANDS[command](str(policy), iid, ledger))
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.splitlines() == expected
    assert aws_calls == []
    assert not ledger.exists()
    assert world.state(iid) == "running" and world.tags(iid) == tags


def test_the_runs_print_every_problem_as_policy_check_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Four problems: on main a run showed three, then "(and 1 more problem in this file)".
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "version: 1\nname: x\nscope: {}\nbudget: {monthly_usd: -1}\n"
        "idle: {threshold_percent: 150, window_minutes: 2x, grace_minutes: x}\n",
        encoding="utf-8",
    )
    assert main(["policy", "check", str(policy)]) == 2
    expected = capsys.readouterr().err.splitlines()[:-1]  # less "1 of 1 policy file ..."
    assert len(expected) == 4
    assert main(["budget", "--policy", str(policy)]) == 2
    assert capsys.readouterr().err.splitlines() == expected
