"""The reconciliation names each part of the gap between estimate and bill."""

from __future__ import annotations

from datetime import date
from decimal import Decimal as D

from gpuplan.core.audit.bill.lines import CostKind, CostLine, EstimateLine
from gpuplan.core.audit.bill.reconcile import GapKind, Threshold, problems, reconcile

DAY = date(2026, 12, 1)
T = Threshold(D(10), D(25))


def line(kind: CostKind, usd: str, itype: str = "", hours: str | None = None) -> CostLine:
    return CostLine("aws", "111122223333", DAY, kind, D(usd), itype, "ml", "x",
                    None if hours is None else D(hours))  # fmt: skip


def est(itype: str, usd: str, hours: str) -> EstimateLine:
    return EstimateLine("aws", DAY, itype, D(usd), D(hours), "ml")


def by_type(rows: list, itype: str):  # type: ignore[no-untyped-def,type-arg]
    return next(r for r in rows if r.instance_type == itype)


def test_each_gap_is_named() -> None:
    rows = reconcile(
        [est("p4d.24xlarge", "786.48", "24"), est("g5.xlarge", "24.14", "24")],
        [
            line(CostKind.INSTANCE, "786.48", "p4d.24xlarge", "24"),
            line(CostKind.COMMITMENT, "-300", "p4d.24xlarge"),
            line(CostKind.INSTANCE, "48.29", "g5.xlarge", "48"),
            line(CostKind.INSTANCE, "8.05", "g6.xlarge", "10"),
            line(CostKind.DISK, "12"),
            line(CostKind.DISCOUNT, "-45"),
            line(CostKind.COMMITMENT, "250"),
        ],
        T,
        through=DAY,
    )
    p4d = by_type(rows, "p4d.24xlarge")
    assert [(g.kind, g.usd) for g in p4d.gaps] == [(GapKind.COMMITMENT, D("300.00"))]
    assert p4d.gap_usd == D("300.00") and not p4d.problem
    g5 = by_type(rows, "g5.xlarge")
    assert g5.gaps[0].kind is GapKind.UNSEEN and g5.gaps[0].usd == D("-24.14")
    assert "24.0 h billed on instances gpuplan never saw" in g5.gaps[0].detail
    assert not g5.problem  # $24.14 is under the $25 floor
    g6 = by_type(rows, "g6.xlarge")
    assert [g.kind for g in g6.gaps] == [GapKind.UNSEEN] and g6.estimate_usd == 0
    assert by_type(rows, "(disks)").gaps[0].kind is GapKind.DISK
    assert by_type(rows, "(discounts and credits)").billed_usd == D("-45.00")
    assert by_type(rows, "(commitment fees)").gaps[0].kind is GapKind.COMMITMENT
    assert problems(rows) == []


def test_unexplained_and_unseen_over_the_threshold_are_problems() -> None:
    rows = reconcile(
        [est("p5.48xlarge", "1320.96", "24")],
        [
            line(CostKind.INSTANCE, "1100", "p5.48xlarge", "24"),
            line(CostKind.INSTANCE, "400", "g6e.12xlarge", "40"),
        ],
        T,
        through=DAY,
    )
    found = problems(rows)
    assert len(found) == 2
    assert "$400.00 billed on g6e.12xlarge instances gpuplan never saw" in found[0]
    assert "p5.48xlarge: $220.96 between estimate and bill is not explained" in found[1]


def test_covered_hours_at_an_effective_rate_are_a_commitment() -> None:
    # Azure amortised cost: 24 of 48 hours under a savings plan at $1.50 instead of $3.00.
    rows = reconcile(
        [est("Standard_NC24ads_A100_v4", "144", "48")],
        [
            line(CostKind.INSTANCE, "72", "Standard_NC24ads_A100_v4", "24"),
            CostLine(
                "aws",
                "s",
                DAY,
                CostKind.COMMITMENT,
                D("36"),
                "Standard_NC24ads_A100_v4",
                "",
                "SavingsPlan",
                D("24"),
            ),
        ],
        T,
        through=DAY,
    )
    (row,) = rows
    assert [(g.kind, g.usd) for g in row.gaps] == [(GapKind.COMMITMENT, D("36.00"))]


def test_days_after_the_last_final_day_wait() -> None:
    rows = reconcile([est("g5.xlarge", "24", "24")], [line(CostKind.DISK, "3")], T,
                     through=date(2026, 11, 30))  # fmt: skip
    assert rows == []


def test_an_estimate_without_a_bill_says_why() -> None:
    (row,) = reconcile([est("g5.xlarge", "24", "24")], [], T, through=DAY)
    assert row.gaps[0].kind is GapKind.NOT_BILLED
    assert "no bill for that day yet" in row.gaps[0].detail


def test_a_commitment_alone_on_an_unseen_type_is_not_unseen_usage() -> None:
    (row,) = reconcile([], [line(CostKind.COMMITMENT, "-50", "p5.48xlarge")], T, through=DAY)
    assert [g.kind for g in row.gaps] == [GapKind.COMMITMENT] and not row.problem
