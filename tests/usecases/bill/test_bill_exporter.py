"""The exporter publishes this month's stored bill per policy, provider and kind."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from freezegun import freeze_time
from prometheus_client.parser import text_string_to_metric_families

from gpuplan.cli.main import main
from gpuplan.core.audit.bill.lines import CostKind, CostLine
from gpuplan.ledger import Ledger
from gpuplan.ledger.bill import replace_lines


@freeze_time("2026-12-03T10:00:00Z")
def test_the_scrape_carries_the_bill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "l.db"
    lines = [
        CostLine("aws", "1", date(2026, 11, 30), CostKind.INSTANCE, Decimal("999"), "p5.48xlarge"),
        CostLine("aws", "1", date(2026, 12, 1), CostKind.INSTANCE, Decimal("700"), "p5.48xlarge"),
        CostLine("aws", "1", date(2026, 12, 2), CostKind.INSTANCE, Decimal("86.5"), "g5.xlarge"),
        CostLine("aws", "1", date(2026, 12, 2), CostKind.DISCOUNT, Decimal("-40"), item="Credit"),
    ]
    with Ledger(db) as ledger:
        replace_lines(ledger, "team-a", "aws", "1", date(2026, 11, 1), date(2026, 12, 4), lines,
                      datetime(2026, 12, 3, tzinfo=UTC))  # fmt: skip
    monkeypatch.setenv("GPUPLAN_DB", str(db))
    assert main(["exporter"]) == 0
    got = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(capsys.readouterr().out)
        for s in family.samples
    }
    key = (("kind", "instance"), ("policy", "team-a"), ("provider", "aws"))
    assert got[("gpuplan_bill_month_to_date_dollars", key)] == 786.5  # November left out
    discount = (("kind", "discount"), ("policy", "team-a"), ("provider", "aws"))
    assert got[("gpuplan_bill_month_to_date_dollars", discount)] == -40
    through = (("policy", "team-a"), ("provider", "aws"))
    assert (
        got[("gpuplan_bill_billed_through_timestamp_seconds", through)]
        == datetime(2026, 12, 2, tzinfo=UTC).timestamp()
    )
