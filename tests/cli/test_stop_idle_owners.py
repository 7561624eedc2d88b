"""``gpuplan stop-idle`` with lifetimes and owners, through the CLI on the fake fleet: the
plan names the rule, ``--apply`` tells the owner once (JSON and text), no secret shown."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from tests.fakes.policy_fixtures import HookServer


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hook_server: HookServer) -> Path:
    started = (datetime.now(UTC) - timedelta(hours=80)).isoformat()
    inst = {"provider": "aws", "account": "1", "region": "us-east-1", "instance_id": "i-sweep",
            "instance_type": "p5.48xlarge", "state": "running", "started_at": started,
            "gpu": "H100", "gpu_count": 8, "hourly_usd": "55.04",
            "labels": {"owner": "ml"}}  # fmt: skip
    fleet = tmp_path / "fleet.json"
    fleet.write_text(json.dumps({"instances": [inst], "utilisation_percent": {"i-sweep": 90}}))
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(fleet))
    monkeypatch.setenv("GPUPLAN_DB", str(tmp_path / "l.db"))
    monkeypatch.setenv("GPUPLAN_HOOK_ML", hook_server.url)
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "version: 1\nname: t\nscope:\n  aws: {regions: [us-east-1]}\n"
        "idle: {allow_data_loss: false}\n"
        "lifetimes: {max_runtime: 72h, notice_minutes: 60}\n"
        "owners:\n  allow_insecure: true\n"
        "  destinations:\n    ml: {webhook_env: GPUPLAN_HOOK_ML}\n",
        encoding="utf-8",
    )
    return policy


def test_dry_run_names_the_rule_and_tells_nobody(
    setup: Path, hook_server: HookServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["stop-idle", "--policy", str(setup), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    [d] = data["decisions"]
    assert d["step"] == "mark" and d["planned_action"] == "stop"
    assert d["reason"].startswith("max_runtime: running 3.3 days")
    assert data["owner_notices"] == [] and hook_server.received == []


def test_apply_tells_the_owner_once(
    setup: Path, hook_server: HookServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["stop-idle", "--policy", str(setup), "--apply"]) == 0
    out = capsys.readouterr().out
    assert "Owner ml of i-sweep (max-runtime): sent (webhook http://127.0.0.1:" in out
    assert "/services/T0/B0/secret" not in out
    # The fake fleet file is read afresh by each command (its tags are not kept), so the
    # second run marks the instance again; the ledger's claim keeps the owner from being
    # told twice.
    assert main(["stop-idle", "--policy", str(setup), "--apply", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert [(n["instance_id"], n["state"]) for n in again["owner_notices"]] == [
        ("i-sweep", "already sent")
    ]
    assert len(hook_server.received) == 1
    assert "gpuplan acts after" in hook_server.received[0]["body"]["text"]
