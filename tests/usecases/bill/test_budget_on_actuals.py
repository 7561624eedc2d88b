"""Budgets on actuals: the bill through its last day + the estimate after it, in two
parts; alerts judged on that (once per threshold and month), not on list prices; a
chargeback table per team."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

from gpuplan.core.audit.bill.lines import CostKind, CostLine
from gpuplan.core.audit.grouping import BY_LABEL_TEAM
from gpuplan.ledger import Ledger
from gpuplan.ledger.bill import replace_lines
from gpuplan.usecases.audit.budget import budget_record, run_budget
from tests.fakes.policy_fixtures import HookServer
from tests.usecases.test_budget import NOW, FakeRegistry, inst, policy, run


def store_bill(ledger: Ledger, daily: str, credit: str = "0") -> None:
    """Nine billed days (Dec 1-9) of p5 time for team research, and a credit per day."""
    lines = []
    for n in range(9):
        day = date(2026, 12, 1) + timedelta(days=n)
        item = "BoxUsage:p5.48xlarge"
        lines.append(CostLine("aws", "123456789012", day, CostKind.INSTANCE, Decimal(daily),
                              "p5.48xlarge", "research", item, Decimal(24)))  # fmt: skip
        if credit != "0":
            lines.append(CostLine("aws", "123456789012", day, CostKind.DISCOUNT,
                                  Decimal(credit), item="Credit/"))  # fmt: skip
    replace_lines(ledger, "team-a", "aws", "123456789012", date(2026, 12, 1),
                  date(2026, 12, 10), lines, NOW)  # fmt: skip


def test_alerts_fire_on_actuals_once(tmp_path: Path, hook_server: HookServer) -> None:
    pol = policy()
    fleet = [inst("a")]  # $10/h since Dec 1: 2400 of 5000 at list price, no alert
    with Ledger(tmp_path / "l.db") as ledger:
        assert run(pol, fleet, ledger, hook_server.url, NOW).alerts == []
        store_bill(ledger, "320.00")  # the bill says more: 9 x 320 = 2880
        first = run(pol, fleet, ledger, hook_server.url, NOW)
        assert first.billed is not None
        assert first.billed.billed_usd == Decimal("2880.00")
        assert first.billed.billed_through == date(2026, 12, 9)
        assert first.billed.unbilled_usd == Decimal("240.00")  # Dec 10, 24 h at $10
        assert [(a.threshold_percent, a.status) for a in first.alerts] == [(50, "sent")]
        again = run(pol, fleet, ledger, hook_server.url, NOW + timedelta(hours=1))
        assert [(a.threshold_percent, a.status) for a in again.alerts] == [(50, "already-sent")]
    assert len(hook_server.received) == 1
    text = hook_server.received[0]["body"]["text"]
    assert "$3,120.00 of $5,000" in text and "$2,880.00 billed through 2026-12-09" in text
    record = budget_record(first)
    assert record["basis"] == "actual"
    assert record["actual"]["month_to_date_usd"] == Decimal("3120.00")
    assert record["month_to_date_usd"] == Decimal("2400.00")  # the estimate, still shown


def test_no_alert_when_list_price_crosses_but_the_bill_does_not(
    tmp_path: Path, hook_server: HookServer
) -> None:
    pol = policy()
    fleet = [inst("a", hourly_usd="17")]  # 4080 of 5000 at list price: 50% and 80%
    with Ledger(tmp_path / "l.db") as ledger:
        store_bill(ledger, "240.00")  # a Savings Plan: 9 x 240 = 2160, + 408 since = 2568
        out = run(pol, fleet, ledger, hook_server.url, NOW)
    assert out.estimate.month_to_date_usd == Decimal("4080.00")
    assert out.billed is not None and out.billed.month_to_date_usd == Decimal("2568.00")
    assert [(a.threshold_percent, a.status) for a in out.alerts] == [(50, "sent")]
    assert len(hook_server.received) == 1  # 80% was crossed at list price only


def test_chargeback_by_team(tmp_path: Path) -> None:
    pol = policy()
    fleet = [inst("a")]
    with Ledger(tmp_path / "l.db") as ledger:
        store_bill(ledger, "300.00", credit="-10.00")
        out = run_budget(pol, ledger=ledger, registry=FakeRegistry(fleet), environ={},
                         now=NOW, notifier=None, by=BY_LABEL_TEAM)  # fmt: skip
    rows = {r.group: r for r in out.chargeback}
    assert rows["research"].actual_usd == Decimal("2700.00")
    assert rows["research"].estimate_usd == Decimal("2400.00")
    assert rows["research"].difference_usd == Decimal("300.00")
    assert rows["(no label)"].actual_usd == Decimal("-90.00")  # credits carry no team
    assert budget_record(out)["chargeback"][0]["group"] == "research"


def test_without_a_bill_the_estimate_is_the_basis(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.db") as ledger:
        out = run(policy(), [inst("a")], ledger, None, datetime(2026, 12, 11, tzinfo=UTC))
    assert out.billed is None and budget_record(out)["basis"] == "estimate"


def test_a_team_policy_counts_its_team_only(tmp_path: Path) -> None:
    pol = policy()  # scope.match_labels: {team: research}
    with Ledger(tmp_path / "l.db") as ledger:
        store_bill(ledger, "300.00", credit="-10.00")
        other = [CostLine("aws", "123456789012", date(2026, 12, 2), CostKind.INSTANCE,
                          Decimal("5000"), "p5.48xlarge", "vision", "BoxUsage:p5")]  # fmt: skip
        replace_lines(ledger, "team-a", "aws", "other-source", date(2026, 12, 1),
                      date(2026, 12, 10), other, NOW)  # fmt: skip
        out = run(pol, [inst("a")], ledger, None, NOW)
    assert out.billed is not None
    assert out.billed.billed_usd == Decimal("2700.00")  # research's lines; not vision's, no credit
