"""The ledger contract, run on both backends: a SQLite file and a real PostgreSQL server.

Every promise the lifecycle, budget, savings and audit code relies on: migrations
applied once (and safely by two processes at once), transactions all-or-nothing and
nestable, ids returned, money exact, alerts marked once, intents and outcomes, the
typed reads with ``?`` placeholders, and per-instance claims.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from gpuplan.ledger import (
    LATEST,
    PENDING,
    ActionRecord,
    DecisionRecord,
    InstanceKey,
    Ledger,
    SpendRecord,
)
from gpuplan.ledger.audit_alerts import audit_alert_sent, mark_audit_alert
from gpuplan.ledger.claims import claim_instance, release_instance
from gpuplan.ledger.queries import acted, sightings

NOW = datetime(2026, 12, 2, 10, 15, tzinfo=UTC)
KEY = InstanceKey("aws", "123456789012", "us-east-1", "i-1")


def versions(ledger: Ledger) -> list[int]:
    return [int(r[0]) for r in ledger.select("SELECT version FROM schema_migrations ORDER BY 1")]


def decision(instance_id: str = "i-1", **over: object) -> DecisionRecord:
    fields: dict[str, object] = {
        "provider": "aws",
        "region": "us-east-1",
        "instance_id": instance_id,
        "instance_type": "p5.48xlarge",
        "state": "running",
        "verdict": "idle",
        "reason": "below 5% for 60m",
        "planned_action": "stop",
        "decided_at": NOW,
        "hourly_usd": Decimal("55.04"),
        "labels": {"team": "research"},
        "gpu_count": 8,
    }
    fields.update(over)
    return DecisionRecord(**fields)  # type: ignore[arg-type]


def test_every_migration_once_and_reopening_applies_nothing(location: str) -> None:
    with Ledger(location) as ledger:
        assert versions(ledger) == list(range(1, LATEST + 1))
        ledger.start_run("stop-idle", "team-a", NOW)
    with Ledger(location) as again:
        assert versions(again) == list(range(1, LATEST + 1))
        assert again.count("runs") == 1  # kept, nothing re-created


def test_two_processes_opening_a_fresh_ledger_at_once_both_succeed(location: str) -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def open_it() -> None:
        try:
            start.wait()
            Ledger(location).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_it) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    with Ledger(location) as ledger:
        assert versions(ledger) == list(range(1, LATEST + 1))


def test_run_decision_action_round_trip_with_ids_and_shard(location: str) -> None:
    with Ledger(location) as ledger:
        ledger.shard = "1/4"
        first = ledger.start_run("stop-idle", "team-a", NOW, dry_run=False)
        second = ledger.start_run("stop-idle", "team-a", NOW + timedelta(minutes=10))
        assert second > first > 0
        d = ledger.record_decision(first, decision())
        a = ledger.record_action(
            first, ActionRecord("aws", "us-east-1", "i-1", "stop", PENDING, NOW, decision_id=d)
        )
        assert [p.id for p in ledger.pending_actions()] == [a]
        ledger.settle_action(a, "stopped", "idle 60m", NOW)
        assert ledger.pending_actions() == []
        ledger.finish_run(first, NOW, "ok", {"actions": {"stopped": 1}})
        newest, oldest = ledger.runs()
        assert (newest.id, oldest.id) == (second, first)
        assert oldest.status == "ok" and oldest.summary == {"actions": {"stopped": 1}}
        assert oldest.finished_at == NOW and oldest.dry_run is False and newest.dry_run
        assert oldest.shard == "1/4"
        assert [r.id for r in ledger.runs(policy="team-b")] == []


def test_a_failed_transaction_leaves_nothing_and_nesting_joins(location: str) -> None:
    with Ledger(location) as ledger:
        with pytest.raises(RuntimeError), ledger.transaction():
            ledger.start_run("stop-idle", "team-a", NOW)
            ledger.record_decision(1, decision())
            raise RuntimeError("crash between the run and its decisions")
        assert ledger.count("runs") == 0 and ledger.count("decisions") == 0
        with ledger.transaction():
            ledger.start_run("stop-idle", "team-a", NOW)
            ledger.start_run("stop-idle", "team-a", NOW)
        assert ledger.count("runs") == 2


def test_money_reads_back_exactly_and_the_last_spend_wins(location: str) -> None:
    with Ledger(location) as ledger:
        for day, amount in ((1, "100.50"), (2, "250.2500001")):
            ledger.record_spend(
                SpendRecord(
                    "team-a", "2026-12", NOW.replace(day=day), Decimal(amount),
                    Decimal("900"), Decimal("1000"), 3, {"by": {"x": "1.1"}},
                )
            )  # fmt: skip
        last = ledger.last_spend("team-a", "2026-12")
        assert last is not None
        assert last.month_to_date_usd == Decimal("250.2500001")
        assert last.detail == {"by": {"x": "1.1"}}
        assert ledger.last_spend("team-a", "2026-11") is None


def test_alerts_are_marked_once_even_at_a_fractional_threshold(location: str) -> None:
    with Ledger(location) as ledger:
        assert ledger.mark_alert("team-a", "2026-12", 33.3, NOW) is True
        assert ledger.mark_alert("team-a", "2026-12", 33.3, NOW) is False
        assert ledger.alert_sent("team-a", "2026-12", 33.3)  # a 4-byte REAL would miss
        assert not ledger.alert_sent("team-a", "2026-12", 80)
        assert mark_audit_alert(
            ledger, "team-a", "i-1", "2026-W49", sent_at=NOW, busy_percent=12.5,
            paid_usd=Decimal("10.01"),
        )  # fmt: skip
        assert not mark_audit_alert(
            ledger, "team-a", "i-1", "2026-W49", sent_at=NOW, busy_percent=12.5,
            paid_usd=Decimal("10.01"),
        )  # fmt: skip
        assert audit_alert_sent(ledger, "team-a", "i-1", "2026-W49")


def test_typed_reads_for_savings_and_waste(location: str) -> None:
    with Ledger(location) as ledger:
        run = ledger.start_run("stop-idle", "team-a", NOW, dry_run=False)
        d = ledger.record_decision(run, decision())
        ledger.record_decision(run, decision("i-2", verdict="busy", planned_action="none"))
        ledger.record_action(
            run, ActionRecord("aws", "us-east-1", "i-1", "stop", "stopped", NOW, decision_id=d)
        )
        dry = ledger.start_run("stop-idle", "team-a", NOW)  # a dry run acts on nothing
        ledger.record_action(dry, ActionRecord("aws", "us-east-1", "i-9", "stop", "stopped", NOW))
        done, damaged = acted(ledger, since=NOW - timedelta(days=1), policy="team-a")
        assert damaged == []
        assert [(a.instance_id, a.hourly_usd, a.labels) for a in done] == [
            ("i-1", Decimal("55.04"), {"team": "research"})
        ]
        seen, damaged = sightings(ledger, since=NOW - timedelta(days=1))
        assert damaged == [] and sorted(s.instance_id for s in seen) == ["i-1", "i-2"]
        assert acted(ledger, since=NOW + timedelta(minutes=1))[0] == []


def test_a_claim_keeps_other_runs_off_until_it_expires_or_is_given_back(location: str) -> None:
    until = NOW + timedelta(minutes=15)
    with Ledger(location) as ledger:
        a = ledger.start_run("stop-idle", "team-a", NOW, dry_run=False)
        b = ledger.start_run("stop-idle", "team-a", NOW, dry_run=False)
        assert claim_instance(ledger, a, KEY, NOW, until) is None
        assert claim_instance(ledger, a, KEY, NOW, until) is None  # its own claim again
        holder = claim_instance(ledger, b, KEY, NOW + timedelta(minutes=5), until)
        assert holder is not None and holder.run_id == a
        assert holder.expires_at.startswith("2026-12-02T10:30:00")
        other = InstanceKey("aws", "123456789012", "us-east-1", "i-2")
        assert claim_instance(ledger, b, other, NOW, until) is None  # per instance
        later = NOW + timedelta(minutes=15)
        assert claim_instance(ledger, b, KEY, later, later + timedelta(minutes=15)) is None
        holder = claim_instance(ledger, a, KEY, later, later)
        assert holder is not None and holder.run_id == b
        release_instance(ledger, a, KEY)  # not a's claim: nothing given back
        assert claim_instance(ledger, a, KEY, later, later) is not None
        release_instance(ledger, b, KEY)
        assert claim_instance(ledger, a, KEY, later, later) is None


def test_only_one_of_many_concurrent_claimants_wins(location: str) -> None:
    with Ledger(location) as setup:
        runs = [setup.start_run("stop-idle", "team-a", NOW, dry_run=False) for _ in range(6)]
    won: list[int] = []
    start = threading.Barrier(len(runs))

    def claim(run: int) -> None:
        with Ledger(location) as ledger:
            start.wait()
            if claim_instance(ledger, run, KEY, NOW, NOW + timedelta(minutes=15)) is None:
                won.append(run)

    threads = [threading.Thread(target=claim, args=(r,)) for r in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(won) == 1
