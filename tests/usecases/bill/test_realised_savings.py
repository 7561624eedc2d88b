"""``savings --policy``: realised dollars from the bill beside the list-price figure."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from gpuplan.cli.main import main
from gpuplan.core.audit.bill.actuals import realised_savings
from gpuplan.core.audit.bill.lines import CostKind, CostLine
from gpuplan.ledger import ActionRecord, DecisionRecord, Ledger
from gpuplan.ledger.bill import replace_lines

STOP = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)
POLICY = """\
version: 1
name: team-a
scope:
  aws: {regions: [us-east-1]}
idle: {allow_data_loss: false}
"""


def day_line(day: int, usd: str, itype: str = "p4d.24xlarge") -> CostLine:
    return CostLine("aws", "111122223333", date(2026, 12, day), CostKind.INSTANCE, Decimal(usd),
                    itype, "ml", f"BoxUsage:{itype}", Decimal(24))  # fmt: skip


def test_realised_is_the_day_before_minus_each_day_after() -> None:
    lines = [day_line(4, "786.54"), day_line(5, "500"), day_line(6, "393.27"), day_line(7, "0")]
    (r,) = realised_savings({"p4d.24xlarge": date(2026, 12, 5)}, lines)
    assert (r.baseline_usd, r.days, r.usd) == (Decimal("786.54"), 2, Decimal("1179.81"))
    assert realised_savings({"g5.xlarge": date(2026, 12, 5)}, lines) == []  # no bill: nothing


@freeze_time("2026-12-08T12:00:00Z")
def test_savings_command_shows_realised_beside_list_price(
    tmp_path: Path, write_policy: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "l.db"
    with Ledger(db) as ledger:
        run = ledger.start_run("stop-idle", "team-a", STOP, dry_run=False)
        decision = ledger.record_decision(
            run, DecisionRecord("aws", "us-east-1", "i-1", "p4d.24xlarge", "running", "idle",
                                "idle", "stop", STOP, account="111122223333",
                                hourly_usd=Decimal("32.7726"), labels={"team": "ml"}),
        )  # fmt: skip
        ledger.record_action(run, ActionRecord("aws", "us-east-1", "i-1", "stop", "stopped",
                                               STOP, decision_id=decision))  # fmt: skip
        lines = [day_line(4, "786.54"), day_line(6, "0"), day_line(7, "0")]
        replace_lines(ledger, "team-a", "aws", "111122223333", date(2026, 12, 1),
                      date(2026, 12, 9), lines, STOP + timedelta(days=3))  # fmt: skip
    policy = write_policy(POLICY)
    rc = main(["savings", "--policy", str(policy), "--db", str(db), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["realised"] == [{"instance_type": "p4d.24xlarge", "first_stop": "2026-12-05",
                                "baseline_daily_usd": 786.54, "billed_days_after": 2,
                                "realised_usd": 1573.08}]  # fmt: skip
    assert out["total"]["usd"] > 0  # the list-price figure beside it
    # --policy also checks AWS reservations; with no cloud reachable that is a named problem.
    assert rc == (1 if out["problems"] else 0)
