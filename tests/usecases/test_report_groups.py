"""Organisation reports: `savings` and `fleet --report` grouped by label or account, with
totals per group, over every run in the ledger whichever shard wrote it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from gpuplan.cli.main import main
from gpuplan.core.audit.grouping import NO_ACCOUNT, NO_LABEL, GroupBy, GroupKind
from gpuplan.core.audit.savings import Acted, Sighting, savings, total, totals, waste
from gpuplan.core.lifecycle.idle import IdleVerdict
from gpuplan.core.lifecycle.instances import InstanceState
from gpuplan.ledger import Ledger
from gpuplan.ledger.store import ActionRecord, DecisionRecord

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
NOW = T0 + timedelta(hours=10)
BY_ACCOUNT = GroupBy(GroupKind.ACCOUNT)
BY_TEAM = GroupBy(GroupKind.LABEL, "team")

# (shard, account, instance, hourly $, labels): two shards of one organisation-wide
# policy, each surveying its own accounts; i-b1 carries no team label.
FLEET = [
    ("shard-0", "111111111111", "i-a1", "10", {"team": "research"}),
    ("shard-0", "111111111111", "i-a2", "4", {"team": "infra"}),
    ("shard-1", "222222222222", "i-b1", "7", {}),
    ("shard-1", "222222222222", "i-b2", "2", {"team": "research"}),
]


def _sighting(at: datetime, iid: str, price: str, labels: dict[str, str], account: str) -> Sighting:
    return Sighting(at, 60, iid, IdleVerdict.IDLE, InstanceState.RUNNING, labels,
                    Decimal(price), 1, account=account)  # fmt: skip


def test_core_groups_by_account_with_totals_in_dollar_order() -> None:
    acted = [Acted(T0, iid, "us-east-1", "g5.xlarge", Decimal(price), labels, account=account)
             for _, account, iid, price, labels in FLEET]  # fmt: skip
    acted.append(Acted(T0, "i-old", "us-east-1", "g5.xlarge", Decimal("3"), {}))  # no account
    lines = savings(acted, [], NOW, BY_ACCOUNT)
    sums = totals(lines)
    assert [(t.group, t.usd, t.instances) for t in sums] == [
        ("111111111111", Decimal("140.00"), 2),  # (10 + 4) x 10 h
        ("222222222222", Decimal("90.00"), 2),
        (NO_ACCOUNT, Decimal("30.00"), 1),
    ]
    assert total(lines).usd == sum((t.usd for t in sums), Decimal(0)) == Decimal("260.00")
    by_team = totals(savings(acted, [], NOW, BY_TEAM))
    assert [(t.group, t.usd) for t in by_team] == [
        ("research", Decimal("120.00")), (NO_LABEL, Decimal("100.00")), ("infra", Decimal("40.00")),
    ]  # fmt: skip
    assert sum((t.usd for t in by_team), Decimal(0)) == total(lines).usd


def test_totals_count_an_instance_once_across_months_and_break_ties_by_name() -> None:
    late = datetime(2026, 11, 30, 22, 0, tzinfo=UTC)  # two hours in November, then December
    acted = [Acted(late, "i-1", "r", "t", Decimal("5"), {"team": "b"}),
             Acted(late, "i-2", "r", "t", Decimal("5"), {"team": "a"})]  # fmt: skip
    lines = savings(acted, [], late + timedelta(hours=4), BY_TEAM)
    assert [(x.month, x.group) for x in lines] == [
        ("2026-11", "a"), ("2026-11", "b"), ("2026-12", "a"), ("2026-12", "b"),
    ]  # fmt: skip
    assert [(t.group, t.usd, t.instances) for t in totals(lines)] == [
        ("a", Decimal("20.00"), 1), ("b", Decimal("20.00"), 1),
    ]  # fmt: skip


def test_waste_groups_by_account() -> None:
    seen = [_sighting(T0, iid, price, labels, account) for _, account, iid, price, labels in FLEET]
    sums = totals(waste(seen, T0 - timedelta(days=1), BY_ACCOUNT))
    assert [(t.group, t.usd) for t in sums] == [
        ("111111111111", Decimal("14.00")), ("222222222222", Decimal("9.00")),
    ]  # fmt: skip


def _ledger(path: Path) -> None:
    """Each shard's applied stop-idle run: all four idle, all four stopped at T0."""
    with Ledger(path) as ledger:
        for shard in ("shard-0", "shard-1"):
            run = ledger.start_run("stop-idle", "org", T0, dry_run=False)
            for _, account, iid, price, labels in (f for f in FLEET if f[0] == shard):
                decision = ledger.record_decision(run, DecisionRecord(
                    provider="aws", region="us-east-1", instance_id=iid,
                    instance_type="g5.xlarge", state="running", verdict="idle",
                    reason="idle", planned_action="stop", decided_at=T0, account=account,
                    hourly_usd=Decimal(price), labels=labels, gpu_count=1,
                ))  # fmt: skip
                ledger.record_action(run, ActionRecord(
                    provider="aws", region="us-east-1", instance_id=iid, action="stop",
                    outcome="stopped", acted_at=T0, decision_id=decision,
                ))  # fmt: skip
            ledger.finish_run(run, T0, "ok", {"shard": shard})


def _json(args: list[str], capsys: pytest.CaptureFixture[str]) -> Any:
    with freeze_time(NOW):
        assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def test_savings_command_groups_every_shard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "ledger.db")
    _ledger(Path(db))
    out = _json(["savings", "--db", db, "--json"], capsys)
    assert out["by"] == "team"
    assert [(t["team"], t["usd"], t["instances"]) for t in out["totals"]] == [
        ("research", 120.0, 2), (NO_LABEL, 70.0, 1), ("infra", 40.0, 1),
    ]  # fmt: skip
    assert out["total"] == {"hours": 40.0, "usd": 230.0, "doubtful_usd": 0.0, "instances": 4}
    assert sum(line["usd"] for line in out["savings"]) == out["total"]["usd"]
    by_account = _json(["savings", "--db", db, "--by", "account", "--json"], capsys)
    assert by_account["by"] == "account"
    assert by_account["total"] == out["total"]  # the groups partition the same dollars
    assert sum(t["usd"] for t in by_account["totals"]) == out["total"]["usd"]
    assert [(t["account"], t["usd"]) for t in by_account["totals"]] == [
        ("111111111111", 140.0),
        ("222222222222", 90.0),
    ]  # fmt: skip  (the account comes from the ledger's decisions, across both shards)
    with freeze_time(NOW):
        assert main(["savings", "--db", db]) == 0
    table = capsys.readouterr().out
    assert "(no label)" in table and "total" in table and "230.00" in table


def test_report_command_groups_every_shard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "ledger.db")
    _ledger(Path(db))
    out = _json(["fleet", "--report", "--since", "7d", "--db", db, "--json"], capsys)
    assert [(t["team"], t["wasted_usd"]) for t in out["totals"]] == [
        ("research", 12.0), (NO_LABEL, 7.0), ("infra", 4.0),
    ]  # fmt: skip
    assert out["total"]["wasted_usd"] == 23.0 and out["total"]["instances"] == 4
    assert sum(g["wasted_usd"] for g in out["groups"]) == out["total"]["wasted_usd"]
    by_account = _json(["waste", "--db", db, "--by", "account", "--json"], capsys)
    assert by_account["total"] == out["total"]
    assert "(no account)" not in {t["account"] for t in by_account["totals"]}
    with freeze_time(NOW):
        assert main(["fleet", "--report", "--db", db, "--by", "label:team"]) == 0
    assert "(no label)" in capsys.readouterr().out


@pytest.mark.parametrize("command", [["savings"], ["waste"], ["fleet", "--report"]])
@pytest.mark.parametrize("by", ["team", "label:", "accounts", "class"])
def test_bad_by_is_one_line_exit_2(
    command: list[str], by: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "ledger.db"
    assert main([*command, "--db", str(db), "--by", by]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--by: expected account or label:KEY" in err
    assert "Traceback" not in err and not db.exists()  # refused before the ledger opened
