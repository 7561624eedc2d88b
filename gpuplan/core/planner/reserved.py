"""Reserved pricing: a commitment is paid for its whole term.

What a job adds to the bill when a commitment is bought for it is the whole term's
cost if the job is shorter than the term, unless the capacity stays busy afterwards
(``reuse``): then only job hours x the reserved rate. Break-even utilisation is the
share of the term the capacity must be busy for the commitment to beat on-demand:
reserved rate / on-demand rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def money(value: Decimal) -> Decimal:
    """Round to cents, half up, as invoices do."""
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def hours_cost(hourly: Decimal, hours: float) -> Decimal:
    """``hourly`` x ``hours`` in cents; hours carry float noise, so six places first."""
    return money(hourly * Decimal(f"{hours:.6f}"))


@dataclass(frozen=True)
class ReservedCost:
    cost: Decimal
    """What this job adds to the bill."""
    commitment: Decimal
    """Term hours x hourly rate: the contract."""
    break_even_utilization: float | None
    """Reserved rate / on-demand rate; None when on-demand is not sold there."""
    whole_term: bool
    """True when the job was charged the whole term."""


def term_cost(hourly: Decimal, hours: float, term_hours: int, *, reuse: bool) -> Decimal:
    """What a job of ``hours`` adds to the bill: :func:`reserved_cost`'s ``cost`` alone."""
    if reuse:
        return hours_cost(hourly, hours)
    terms = max(1, -(-int(hours * 1_000_000) // (term_hours * 1_000_000)))
    return money(money(hourly * term_hours) * terms)


def reserved_cost(
    hourly: Decimal,
    hours: float,
    term_hours: int,
    *,
    on_demand_hourly: Decimal | None,
    reuse: bool,
) -> ReservedCost:
    commitment = money(hourly * term_hours)
    terms = max(1, -(-int(hours * 1_000_000) // (term_hours * 1_000_000)))
    if reuse:
        cost, whole = hours_cost(hourly, hours), False
    else:
        cost, whole = money(commitment * terms), True
    break_even = None
    if on_demand_hourly is not None and on_demand_hourly > 0:
        break_even = float(hourly / on_demand_hourly)
    return ReservedCost(cost, money(commitment * terms), break_even, whole)
