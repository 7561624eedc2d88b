"""The SQLite ledger: migrations, transactions, spend snapshots and alert memory."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.ledger import (
    LATEST,
    ActionRecord,
    DecisionRecord,
    Ledger,
    LedgerError,
    SpendRecord,
    ledger_path,
)
from gpuplan.ledger.migrations import migrate

NOW = datetime(2026, 12, 2, 10, 15, tzinfo=UTC)


def versions(path: Path) -> list[int]:
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY 1")]


def test_new_ledger_has_every_migration(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "l.sqlite3"
    with Ledger(path):
        pass
    assert versions(path) == list(range(1, LATEST + 1))
    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"runs", "decisions", "actions", "spend_snapshots", "alerts_sent"} <= tables


def test_old_ledger_is_upgraded_in_place_keeping_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    assert migrate(conn, str(path), upto=1) == [1]
    conn.execute(
        "INSERT INTO runs (kind, policy, started_at) VALUES ('stop-idle', 'team-a', ?)",
        (NOW.isoformat(),),
    )
    conn.close()
    assert versions(path) == [1]
    with Ledger(path) as ledger:
        assert versions(path) == list(range(1, LATEST + 1))
        [run] = ledger.runs()
        assert (run.kind, run.policy, run.status) == ("stop-idle", "team-a", "running")
        ledger.record_spend(
            SpendRecord("team-a", "2026-12", NOW, Decimal("10"), Decimal("20"), None, 1)
        )
    with Ledger(path) as again:  # reopening applies nothing twice
        assert again.count("spend_snapshots") == 1
    assert versions(path) == list(range(1, LATEST + 1))


def test_ledger_from_a_newer_gpuplan_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite3"
    Ledger(path).close()
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO schema_migrations VALUES (?, 'future', '2030-01-01T00:00:00Z')",
            (LATEST + 1,),
        )
    with pytest.raises(LedgerError, match=f"schema version {LATEST + 1} is newer"):
        Ledger(path)


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello, this is not SQLite\n" * 100)
    with pytest.raises(LedgerError, match="cannot use as the gpuplan ledger"):
        Ledger(path)


def test_run_decisions_and_actions_round_trip(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        run = ledger.start_run("stop-idle", "team-a", NOW, dry_run=False)
        decision = ledger.record_decision(
            run,
            DecisionRecord(
                provider="aws",
                region="us-east-1",
                instance_id="i-1",
                instance_type="p5.48xlarge",
                state="running",
                verdict="idle",
                reason="below 5% for 60m",
                planned_action="stop",
                decided_at=NOW,
                hourly_usd=Decimal("55.04"),
                labels={"team": "research"},
            ),
        )
        ledger.record_action(
            run,
            ActionRecord("aws", "us-east-1", "i-1", "stop", "stopped", NOW, decision_id=decision),
        )
        ledger.finish_run(run, NOW, "ok", {"stopped": 1})
        [record] = ledger.runs()
        assert record.status == "ok" and record.summary == {"stopped": 1}
        assert record.finished_at == NOW and record.dry_run is False
        assert ledger.count("decisions") == 1 and ledger.count("actions") == 1


def test_failed_transaction_leaves_nothing(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        with pytest.raises(RuntimeError), ledger.transaction() as conn:
            conn.execute("INSERT INTO runs (kind, policy, started_at) VALUES ('x', 'y', 'z')")
            raise RuntimeError("boom")
        assert ledger.count("runs") == 0


def test_last_spend_is_the_latest_of_that_month(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        assert ledger.last_spend("team-a", "2026-12") is None
        for day, amount in ((1, "100.50"), (2, "250.25")):
            at = NOW.replace(day=day)
            ledger.record_spend(
                SpendRecord(
                    "team-a", "2026-12", at, Decimal(amount), Decimal("900"), Decimal("1000"), 3
                )
            )
        ledger.record_spend(
            SpendRecord("team-b", "2026-12", NOW, Decimal("7"), Decimal("8"), None, 1)
        )
        last = ledger.last_spend("team-a", "2026-12")
        assert last is not None
        assert last.month_to_date_usd == Decimal("250.25")  # exact, stored as text
        assert last.monthly_usd == Decimal("1000")
        assert ledger.last_spend("team-a", "2026-11") is None


def test_alert_is_marked_once(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        assert not ledger.alert_sent("team-a", "2026-12", 50)
        assert ledger.mark_alert("team-a", "2026-12", 50, NOW) is True
        assert ledger.mark_alert("team-a", "2026-12", 50.0, NOW) is False
        assert ledger.alert_sent("team-a", "2026-12", 50)
        assert not ledger.alert_sent("team-a", "2027-01", 50)
        assert not ledger.alert_sent("team-a", "2026-12", 80)


def test_ledger_path_flag_beats_env_beats_default(tmp_path: Path) -> None:
    env = {"GPUPLAN_DB": str(tmp_path / "env.sqlite3")}
    assert ledger_path(tmp_path / "flag.sqlite3", env) == tmp_path / "flag.sqlite3"
    assert ledger_path(None, env) == tmp_path / "env.sqlite3"
    default = ledger_path(None, {})
    assert default.name == "ledger.sqlite3" and "gpuplan" in str(default)


def test_nested_transactions_land_or_roll_back_together(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "nested.sqlite3")
    now = datetime(2026, 12, 2, tzinfo=UTC)
    with pytest.raises(RuntimeError), ledger.transaction():
        ledger.start_run("stop-idle", "team-a", now)
        raise RuntimeError("crash between the run and its decisions")
    with ledger.transaction():
        ledger.start_run("stop-idle", "team-a", now)
        ledger.start_run("stop-idle", "team-a", now)
    count = ledger._conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    assert count == 2
    ledger.close()
