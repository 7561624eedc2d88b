"""What a run says about a killed run's composite action, through ``main()``.

A killed run left a snapshot-then-stop half done: the snapshot made and recorded
(``made``), the stop pending. The next ``stop-idle --apply`` over the demo fleet resumes
the stop and says so under the table, with the snapshot's id; ``history --json`` lists
the id under the killed run (``made``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.lifecycle.actions import Call, StepState
from gpuplan.ledger import ActionRecord, Ledger
from gpuplan.ledger.steps import mark_step, record_steps

DOCS = Path(__file__).resolve().parents[2] / "docs" / "examples"
IID = "i-0idle"  # idle in the demo fleet
POLICY = """\
version: 1
name: research
scope:
  aws: {regions: [us-east-1]}
  match_labels: {team: research}
idle:
  window_minutes: 30
  grace_minutes: 0
  allow_data_loss: true
"""


def test_a_resumed_action_is_reported_with_the_ids_its_steps_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(DOCS / "demo-fleet.json"))
    monkeypatch.delenv("GPUPLAN_WEBHOOK_URL", raising=False)
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    db = tmp_path / "ledger.sqlite3"
    killed_at = datetime.now(UTC) - timedelta(hours=1)
    with Ledger(db) as ledger:  # what the killed run left
        run = ledger.start_run("stop-idle", "research", killed_at, dry_run=False)
        intent = ledger.record_action(
            run, ActionRecord("aws", "us-east-1", IID, "stop", "pending", killed_at)
        )
        snap, stop = record_steps(ledger, intent, [Call.SNAPSHOT, Call.STOP], killed_at)
        mark_step(ledger, snap, StepState.DONE, "snapshot snap-0abc", killed_at, made=["snap-0abc"])
        mark_step(ledger, stop, StepState.PENDING, "", killed_at, label="gpuplan-step=1f")

    assert main(["stop-idle", "--policy", str(policy), "--apply", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    said = next(line for line in out.splitlines() if line.startswith("Reconciled"))
    assert said.startswith(f"Reconciled {IID} (stop): stopped: resumed after a killed run")
    assert out.replace("\n", " ").rstrip().endswith("; snapshot snap-0abc"), out

    assert main(["history", "--json", "--db", str(db)]) == 0
    runs = {r["run_id"]: r for r in json.loads(capsys.readouterr().out)}
    assert runs[run]["made"] == [{"instance_id": IID, "step": "snapshot", "id": "snap-0abc"}]
    assert runs[run]["status"] == "killed"
