"""``gpuplan history`` counts from the ledger's rows, so a run killed mid-way still shows."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.ledger import Ledger
from gpuplan.ledger.store import ActionRecord, DecisionRecord

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def _decide(ledger: Ledger, run: int, iid: str, verdict: str) -> int:
    return ledger.record_decision(run, DecisionRecord(
        provider="aws", region="us-east-1", instance_id=iid, instance_type="g5.xlarge",
        state="running", verdict=verdict, reason=verdict, planned_action="stop",
        decided_at=T0, hourly_usd=Decimal("1.006"), gpu_count=1,
    ))  # fmt: skip


def test_a_run_killed_before_its_summary_still_shows_what_it_did(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "ledger.db")
    with Ledger(db) as ledger:
        run = ledger.start_run("stop-idle", "team-a", T0, dry_run=False)
        stopped = _decide(ledger, run, "i-1", "idle")
        _decide(ledger, run, "i-2", "busy")
        in_flight = _decide(ledger, run, "i-3", "idle")
        ledger.record_action(run, ActionRecord(
            provider="aws", region="us-east-1", instance_id="i-1", action="stop",
            outcome="stopped", acted_at=T0, decision_id=stopped,
        ))  # fmt: skip
        ledger.record_action(run, ActionRecord(
            provider="aws", region="us-east-1", instance_id="i-3", action="stop",
            outcome="pending", acted_at=T0, decision_id=in_flight,
        ))  # fmt: skip
        # killed here: no finish_run, no summary
    assert main(["history", "--db", db, "--json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)
    assert record["verdicts"] == {"busy": 1, "idle": 2}
    assert record["actions"] == {"pending": 1, "stopped": 1}
    assert [(a["instance_id"], a["action"], a["instance_type"]) for a in record["acted"]] == [
        ("i-1", "stopped", "g5.xlarge")
    ]
    assert main(["history", "--db", db]) == 0
    table = capsys.readouterr().out
    assert "1 stopped" in table and "1 pending" in table and "2 idle" in table
