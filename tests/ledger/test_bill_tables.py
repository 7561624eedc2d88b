"""The bill's tables on both backends: a sync's window replaced whole, money read back
exactly, estimates beside the lines, the sightings they come from."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

from gpuplan.core.audit.bill.lines import CostKind, CostLine, EstimateLine
from gpuplan.ledger import DecisionRecord, Ledger
from gpuplan.ledger import bill as store

AT = datetime(2026, 12, 3, 6, 0, tzinfo=UTC)
D1, D2, D3 = date(2026, 12, 1), date(2026, 12, 2), date(2026, 12, 3)


def line(day: date, usd: str, item: str = "BoxUsage:p5.48xlarge") -> CostLine:
    return CostLine("aws", "111122223333", day, CostKind.INSTANCE, Decimal(usd),
                    "p5.48xlarge", "ml", item, Decimal("24.5"), final=day < D2)  # fmt: skip


def test_lines_replace_their_window_and_read_back_exactly(location: str) -> None:
    with Ledger(location) as ledger:
        store.replace_lines(ledger, "p", "aws", "acct", D1, D3, [line(D1, "1.0000000001"),
                            line(D2, "2"), line(D2, "3")], AT)  # fmt: skip
        # A second sync of day 2 only: day 1 stays, day 2 is replaced.
        store.replace_lines(ledger, "p", "aws", "acct", D2, D3, [line(D2, "7.25")], AT)
        # Another source's rows are never touched by this one's window.
        store.replace_lines(ledger, "p", "aws", "other", D1, D3, [line(D2, "100")], AT)
        store.replace_estimates(ledger, "p", D1, D3,
                                [EstimateLine("aws", D1, "p5.48xlarge", Decimal("55.04"),
                                              Decimal("1"), "ml", "acct")], AT)  # fmt: skip
        got, damaged = store.lines(ledger, "p", D1, D3)
        estimates, bad = store.estimates(ledger, "p", D1, D3)
    assert not damaged and not bad
    assert [(x.day, x.usd, x.final) for x in got] == [
        (D1, Decimal("1.0000000001"), True),
        (D2, Decimal("7.25"), False),
        (D2, Decimal("100"), False),
    ]
    assert got[0].hours == Decimal("24.5")
    assert [(e.instance_type, e.usd, e.scope) for e in estimates] == [
        ("p5.48xlarge", Decimal("55.04"), "acct")
    ]


def test_sightings_for_the_estimate(location: str) -> None:
    with Ledger(location) as ledger:
        run = ledger.start_run("stop-idle", "p", AT)
        ledger.record_decision(run, DecisionRecord(
            "gcp", "us-central1", "vm-1", "a2-highgpu-1g", "running", "busy", "busy", "none",
            AT, account="ml-proj", hourly_usd=Decimal("3.6729"), labels={"team": "ml"},
        ))  # fmt: skip
        seen, damaged = store.seen(ledger, "p", datetime(2026, 12, 1, tzinfo=UTC))
        none, _ = store.seen(ledger, "other-policy", datetime(2026, 12, 1, tzinfo=UTC))
    assert not damaged and none == []
    (s,) = seen
    assert (s.provider, s.account, s.instance_type, s.bills, s.hourly_usd) == (
        "gcp",
        "ml-proj",
        "a2-highgpu-1g",
        True,
        Decimal("3.6729"),
    )
