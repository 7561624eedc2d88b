"""One day's billed cost, as the bill words it, mapped to a kind gpuplan can explain.

A :class:`CostLine` is one row of a cloud's cost data for one day: AWS Cost Explorer
(a usage type and record type), the GCP billing export (a SKU, its credits) or Azure
Cost Management (a meter, its pricing model). Its :class:`CostKind` says what it is
for the reconciliation: GPU instance time (with the instance type and the hours when
the bill says them), a disk, a commitment (Savings Plan, reservation, committed-use
discount) or a discount or credit. An :class:`EstimateLine` is gpuplan's own list-price
figure for the same provider, day and instance type, from the ledger's sightings.

The clouds' cost data lags: :data:`LAG_DAYS` whole days are not final yet.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from enum import StrEnum

LAG_DAYS = 1
"""Cost APIs are about a day behind (AWS Cost Explorer refreshes at least daily, the GCP
billing export and Azure Cost Management within 24 hours, up to 72 h at month end):
``today`` and the day before are not final and are not reconciled."""
ZERO = Decimal(0)
CENT = Decimal("0.01")
MAX_USD = Decimal(10) ** 12
"""A cost line beyond a trillion dollars is not a bill: refused at the edge."""


class CostKind(StrEnum):
    """What a billed line is, for the reconciliation."""

    INSTANCE = "instance"
    """Instance time (AWS BoxUsage, a GCP VM's GPU/core/RAM SKUs, an Azure VM meter)."""
    DISK = "disk"
    """Block storage: EBS volumes and snapshots, persistent disks, managed disks."""
    COMMITMENT = "commitment"
    """Savings Plan / reservation / committed-use coverage (negative) or its fee."""
    DISCOUNT = "discount"
    """Credits, enterprise (EDP) and private-pricing discounts, promotions (negative)."""
    OTHER = "other"
    """Anything else in scope (network, IPs, support, tax)."""


@dataclass(frozen=True)
class CostLine:
    """One billed amount on one day, as the cloud's cost API returned it."""

    provider: str
    scope: str
    """The account, project or subscription the bill was read for."""
    day: date
    kind: CostKind
    usd: Decimal
    instance_type: str = ""
    """The instance type / machine type / VM size the line is for; "" when none."""
    team: str = ""
    """The team label's value on the resource; "" when untagged or not attributable."""
    item: str = ""
    """What the bill calls it: usage type, SKU or meter (no ids, no secrets)."""
    hours: Decimal | None = None
    """Instance-hours billed (instance lines), None when the bill does not say."""
    final: bool = True
    """False while the cloud still marks the day as estimated (within the lag)."""


@dataclass(frozen=True)
class EstimateLine:
    """gpuplan's list-price estimate for one provider, day, instance type and team."""

    provider: str
    day: date
    instance_type: str
    usd: Decimal
    hours: Decimal
    team: str = ""
    scope: str = ""


def last_final_day(today: date) -> date:
    """The latest day whose bill is final at ``today`` (``today`` minus the lag, minus
    one: the day itself is still running)."""
    return today - timedelta(days=LAG_DAYS + 1)


def billed_through(lines: Iterable[CostLine]) -> date | None:
    """The last day any line was billed for (the actuals cover every day up to it)."""
    return max((line.day for line in lines), default=None)


def total(lines: Iterable[CostLine]) -> Decimal:
    return sum((line.usd for line in lines), ZERO)


def checked_usd(value: object, where: str) -> Decimal:
    """A cost amount from a cost API: a finite decimal within :data:`MAX_USD`."""
    from decimal import InvalidOperation

    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise ValueError(f"{where}: expected a number, got {str(value)[:40]!r}") from None
    if not amount.is_finite() or abs(amount) > MAX_USD:
        raise ValueError(f"{where}: expected a finite amount, got {str(value)[:40]!r}")
    return amount
