"""Reconciliation: gpuplan's list-price estimate beside the bill, the gap explained.

Per provider, day and instance type: the estimate (ledger sightings x list price), the
billed instance cost and hours, and the gap (estimate minus what was paid) split into
the parts the bill explains:

- **commitment**: Savings Plan / reservation / committed-use coverage billed against
  that instance type (AWS ``SavingsPlanNegation``, GCP CUD credits, Azure reservation);
- **unseen**: instance-hours billed beyond the hours gpuplan's ledger saw (instances
  outside the policy's scope, untagged, or launched and gone between runs), at the
  billed rate;
- **unexplained**: what is left (a rate different from the catalog's, hours between
  sparse runs). An unexplained or unseen amount over the threshold is a problem.

Disks and discounts or credits are not per instance type in the bill: each day's
total is a row of its own (``(disks)``, ``(discounts and credits)``, ``(other)``), named
but never a problem: gpuplan's estimate counts GPU instance time only.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from enum import StrEnum

from gpuplan.core.audit.bill.lines import CENT, ZERO, CostKind, CostLine, EstimateLine

DAY_ROWS = {
    CostKind.COMMITMENT: "(commitment fees)",
    CostKind.DISK: "(disks)",
    CostKind.DISCOUNT: "(discounts and credits)",
    CostKind.OTHER: "(other)",
}
"""Kinds reported per day, not per instance type, and the row each becomes."""
_HOURS_SLACK = Decimal("0.5")
_ROUNDING = Decimal("0.02")
"""Cents lost to rounding each side to the cent: not a gap."""
"""Billed hours within this of the ledger's are the same instances (run spacing)."""


class GapKind(StrEnum):
    """A named part of the difference between estimate and bill."""

    COMMITMENT = "commitment"
    """A Savings Plan, reservation or committed-use discount covered part of the usage."""
    UNSEEN = "unseen"
    """Billed instance-hours on instances gpuplan's ledger never saw."""
    DISK = "disk"
    """Disks are billed; gpuplan's estimate counts instance time only."""
    DISCOUNT = "discount"
    """A discount or credit line (EDP, promotional credit, sustained use)."""
    OTHER = "other"
    """Other billed cost in scope (network, IPs, support, tax)."""
    NOT_BILLED = "not_billed"
    """gpuplan estimated hours the bill does not show (another account, or not final)."""
    UNEXPLAINED = "unexplained"
    """What is left: a rate different from the catalog's, hours between sparse runs."""


@dataclass(frozen=True)
class Gap:
    kind: GapKind
    usd: Decimal
    """Signed like the row's gap: positive when it makes the bill lower than the estimate."""
    detail: str


@dataclass(frozen=True)
class ReconRow:
    provider: str
    day: date
    instance_type: str
    """An instance type, or one of :data:`DAY_ROWS`' names."""
    estimate_usd: Decimal
    estimate_hours: Decimal
    billed_usd: Decimal
    """What was paid: instance lines plus commitment lines for this type."""
    billed_hours: Decimal | None
    gaps: tuple[Gap, ...] = field(default=())
    problem: str = ""
    """Why this row is over the threshold; "" when it is not."""

    @property
    def gap_usd(self) -> Decimal:
        """Estimate minus billed: positive when the bill is lower than the estimate."""
        return self.estimate_usd - self.billed_usd


@dataclass(frozen=True)
class Threshold:
    """When an unexplained or unseen amount is a problem: over both of these."""

    percent: Decimal
    """Share of the row's estimate (or of its bill when nothing was estimated)."""
    min_usd: Decimal

    def exceeded(self, amount: Decimal, base: Decimal) -> bool:
        size = abs(amount)
        return size > self.min_usd and size * 100 > abs(base) * self.percent


@dataclass
class _Cell:
    estimate: Decimal = ZERO
    estimate_hours: Decimal = ZERO
    billed: Decimal = ZERO
    hours: Decimal | None = None
    commitment: Decimal = ZERO
    covered_hours: Decimal = ZERO
    """Hours billed at a commitment's effective rate (Azure reservations, Savings Plans)."""
    covered_usd: Decimal = ZERO
    estimated: bool = False
    billed_any: bool = False


def reconcile(
    estimates: Iterable[EstimateLine],
    lines: Iterable[CostLine],
    threshold: Threshold,
    *,
    through: date,
) -> list[ReconRow]:
    """Rows per provider, day (up to ``through``, the last final day) and instance type,
    then the day rows for disks, discounts and other; each with its gaps named."""
    cells: dict[tuple[str, date, str], _Cell] = defaultdict(_Cell)
    day_totals: dict[tuple[str, date, CostKind], Decimal] = defaultdict(Decimal)
    billed_days: set[tuple[str, date]] = set()
    for e in estimates:
        if e.day <= through:
            cell = cells[(e.provider, e.day, e.instance_type)]
            cell.estimate += e.usd
            cell.estimate_hours += e.hours
            cell.estimated = True
    for line in lines:
        if line.day > through:
            continue
        billed_days.add((line.provider, line.day))
        if line.kind is not CostKind.COMMITMENT and line.kind in DAY_ROWS:
            day_totals[(line.provider, line.day, line.kind)] += line.usd
            continue
        if not line.instance_type:
            kind = line.kind if line.kind in DAY_ROWS else CostKind.OTHER
            day_totals[(line.provider, line.day, kind)] += line.usd
            continue
        cell = cells[(line.provider, line.day, line.instance_type)]
        cell.billed += line.usd
        cell.billed_any = True
        if line.kind is CostKind.COMMITMENT and line.hours is not None:
            cell.covered_hours += line.hours
            cell.covered_usd += line.usd
            cell.hours = (cell.hours or ZERO) + line.hours
        elif line.kind is CostKind.COMMITMENT:
            cell.commitment += line.usd
        elif line.hours is not None:
            cell.hours = (cell.hours or ZERO) + line.hours
    rows = [
        _row(key, cell, threshold, billed=key[:2] in billed_days)
        for key, cell in sorted(cells.items())
    ]
    rows.extend(_day_row(key, usd) for key, usd in sorted(day_totals.items()))
    return rows


def _row(key: tuple[str, date, str], c: _Cell, threshold: Threshold, *, billed: bool) -> ReconRow:
    provider, day, kind = key
    gaps: list[Gap] = []
    problem = ""
    covered = _covered(c)
    if covered:
        gaps.append(Gap(GapKind.COMMITMENT, covered,
                        f"Savings Plan / reservation / committed use saved "
                        f"${covered:,.2f} on it"))  # fmt: skip
    unseen = _unseen(c)
    if unseen:
        extra_hours, usd = unseen
        hours = f"{extra_hours:.1f} h" if extra_hours else "usage"
        gaps.append(Gap(GapKind.UNSEEN, -usd,
                        f"{hours} billed on instances gpuplan never saw "
                        f"(${usd:,.2f})"))  # fmt: skip
        if threshold.exceeded(usd, c.estimate or c.billed):
            problem = f"${usd:,.2f} billed on {kind} instances gpuplan never saw"
    if not c.billed_any and c.estimated:
        why = "not billed in this scope" if billed else "no bill for that day yet"
        gaps.append(Gap(GapKind.NOT_BILLED, c.estimate, f"gpuplan estimated it; {why}"))
    else:
        explained = sum((g.usd for g in gaps), ZERO)
        rest = (c.estimate - c.billed - explained).quantize(CENT)
        if abs(rest) > _ROUNDING:
            side = "less" if rest > 0 else "more"
            gaps.append(Gap(GapKind.UNEXPLAINED, rest,
                            f"${abs(rest):,.2f} {side} billed than estimated, not explained "
                            "by the bill's lines"))  # fmt: skip
            if not problem and threshold.exceeded(rest, c.estimate or c.billed):
                problem = (f"{kind}: ${rest:,.2f} between estimate and bill is not explained "
                           f"(over {threshold.percent}% and ${threshold.min_usd})")  # fmt: skip
    return ReconRow(provider, day, kind, c.estimate.quantize(CENT), c.estimate_hours,
                    c.billed.quantize(CENT), c.hours, tuple(gaps), problem)  # fmt: skip


def _covered(c: _Cell) -> Decimal:
    """What commitments took off: negative coverage lines, plus covered hours at the
    estimate's rate minus what they were billed."""
    saved = -c.commitment
    if c.covered_hours and c.estimate_hours:
        rate = c.estimate / c.estimate_hours
        saved += min(c.covered_hours, c.estimate_hours) * rate - c.covered_usd
    return saved.quantize(CENT)


def _unseen(c: _Cell) -> tuple[Decimal, Decimal] | None:
    """Billed hours beyond the ledger's, and their cost at the billed rate; a type the
    ledger never saw at all is unseen whole (hours or not)."""
    if not c.estimated and c.billed_any:
        paid = (c.billed - c.commitment).quantize(CENT)
        return ((c.hours or ZERO), paid) if paid > 0 else None
    if c.hours is None or c.hours <= c.estimate_hours + _HOURS_SLACK:
        return None
    extra = c.hours - c.estimate_hours
    paid = c.billed - c.commitment - c.covered_usd
    plain = c.hours - c.covered_hours
    return extra, (paid * min(extra, plain) / plain).quantize(CENT) if plain else ZERO


def _day_row(key: tuple[str, date, CostKind], usd: Decimal) -> ReconRow:
    provider, day, kind = key
    gap_kind = {
        CostKind.DISK: GapKind.DISK,
        CostKind.DISCOUNT: GapKind.DISCOUNT,
        CostKind.COMMITMENT: GapKind.COMMITMENT,
    }.get(kind, GapKind.OTHER)
    text = {
        GapKind.COMMITMENT: "commitment fees (Savings Plan, reservation), paid whatever runs",
        GapKind.DISK: "disks are billed; the estimate counts instance time only",
        GapKind.DISCOUNT: "discounts and credits on the bill, not in list prices",
        GapKind.OTHER: "other billed cost in scope, not in the estimate",
    }[gap_kind]
    amount = usd.quantize(CENT)
    return ReconRow(provider, day, DAY_ROWS[kind], ZERO, ZERO, amount, None,
                    (Gap(gap_kind, -amount, text),))  # fmt: skip


def problems(rows: Iterable[ReconRow]) -> list[str]:
    """One line per row over the threshold, naming provider and day."""
    return [f"{r.provider} {r.day}: {r.problem}" for r in rows if r.problem]
