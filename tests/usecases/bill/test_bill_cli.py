"""``gpuplan bill sync`` and ``bill reconcile`` through the CLI: AWS on moto's Cost
Explorer, JSON out, exit 1 on a gap over the threshold, exit 2 on bad input."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from freezegun import freeze_time

from gpuplan.cli.main import main
from gpuplan.ledger import Ledger
from tests.fakes.bill_world import AWS_PRICES, CE_OTHER, CE_USAGE, seed_ledger

POLICY = """\
version: 1
name: team-a
scope:
  aws: {regions: [us-east-1]}
idle: {allow_data_loss: false}
bill: {gap_percent: 10, gap_min_usd: 50}
"""


@pytest.fixture
def moto_ce(aws_env: None) -> Iterator[None]:
    from moto import mock_aws

    with mock_aws():
        requests.post("http://motoapi.amazonaws.com/moto-api/static/ce/cost-and-usage-results",
                      json={"results": [CE_USAGE, CE_OTHER]}, timeout=5)  # fmt: skip
        yield


@freeze_time("2026-12-03T10:00:00Z")
def test_sync_then_reconcile(
    moto_ce: None, tmp_path: Path, write_policy: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "l.db"
    with Ledger(db) as ledger:
        seed_ledger(ledger, "team-a", "aws", AWS_PRICES)
    policy = str(write_policy(POLICY))
    assert main(["bill", "sync", "--policy", policy, "--db", str(db), "--since", "2026-12-01",
                 "--json"]) == 0  # fmt: skip
    synced = json.loads(capsys.readouterr().out)
    assert synced["sources"] == [{"source": "aws 123456789012", "lines": 8}]
    assert synced["final_through"] == "2026-12-01" and "a day behind" in synced["lag"]
    rc = main(["bill", "reconcile", "--policy", policy, "--db", str(db), "--since",
               "2026-12-01", "--json"])  # fmt: skip
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert rc == 1
    kinds = {r["instance_type"]: [g["kind"] for g in r["gaps"]] for r in out["rows"]}
    assert kinds["p4d.24xlarge"] == ["commitment"]
    assert kinds["g5.xlarge"][0] == "unseen" and kinds["g6e.12xlarge"] == ["unseen"]
    assert kinds["(disks)"] == ["disk"] and kinds["(discounts and credits)"] == ["discount"]
    assert "g6e.12xlarge instances gpuplan never saw" in captured.err
    assert "testing" not in captured.out + captured.err  # the fake secret key


@freeze_time("2026-12-03T10:00:00Z")
def test_reconcile_table(
    tmp_path: Path, write_policy: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = str(write_policy(POLICY))
    assert main(["bill", "reconcile", "--policy", policy, "--db", str(tmp_path / "l.db")]) == 0
    out = capsys.readouterr().out
    assert "Final through 2026-12-01" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--since", "yesterday"], "expected a date such as 2026-12-01"),
        (["--since", "2030-01-01"], "is after today"),
    ],
)
def test_bad_input_is_exit_2(
    argv: list[str], message: str, tmp_path: Path, write_policy: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    policy = str(write_policy(POLICY))
    try:
        rc = main(["bill", "reconcile", "--policy", policy, "--db", str(tmp_path / "l.db"), *argv])
    except SystemExit as exit_:  # argparse's own refusal of the flag's value
        rc = int(exit_.code or 0)
    assert rc == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_bad_threshold_names_the_key(
    tmp_path: Path, write_policy: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = str(write_policy(POLICY.replace("gap_percent: 10", "gap_percent: 400")))
    assert main(["bill", "reconcile", "--policy", policy, "--db", str(tmp_path / "l.db")]) == 2
    err = capsys.readouterr().err
    assert "bill.gap_percent" in err and ":6:" in err
