"""Month-to-date GPU spend, as an estimate from what providers report, and its forecast.

Pure: instances, their hourly prices and ``now`` come in; a :class:`SpendEstimate`
goes out. The estimate counts each instance's hours since its last start (or the
start of the month, whichever is later) while it bills, times its hourly price. It
cannot see hours before an instance's last start, nor instances already terminated:
it is a lower bound, and :data:`BLIND_SPOTS` says so wherever it is shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from gpuplan.core.lifecycle.instances import GpuInstance

BLIND_SPOTS = (
    "instances terminated earlier this month are not listed by the providers",
    "hours before an instance's last start (stopped and restarted) are not counted",
    "disks, IPs, network and commitments are not included; this is GPU instance time only",
)
_HOUR = Decimal(3600)
_CENT = Decimal("0.01")


@dataclass(frozen=True)
class InstanceSpend:
    """One instance's part of the month: billed hours, price and cost so far."""

    instance: GpuInstance
    hours: Decimal
    hourly_usd: Decimal | None
    cost_usd: Decimal | None
    """None when the price is unknown: such an instance is listed but not summed."""
    billing_now: bool
    note: str = ""


@dataclass(frozen=True)
class SpendEstimate:
    """Month-to-date spend, the burn rate now, and where the month ends at that rate."""

    month: str
    """``YYYY-MM`` of ``now`` in UTC."""
    now: datetime
    month_start: datetime
    month_end: datetime
    month_to_date_usd: Decimal
    burn_hourly_usd: Decimal
    """What the instances billing right now cost per hour together."""
    forecast_usd: Decimal
    monthly_usd: Decimal | None
    instances: tuple[InstanceSpend, ...]
    unpriced: int
    """Instances whose price is unknown (not in the catalog)."""

    @property
    def percent_used(self) -> Decimal | None:
        return _percent(self.month_to_date_usd, self.monthly_usd)

    @property
    def percent_forecast(self) -> Decimal | None:
        return _percent(self.forecast_usd, self.monthly_usd)


def _percent(amount: Decimal, budget: Decimal | None) -> Decimal | None:
    if budget is None or budget <= 0:
        return None
    return (amount * 100 / budget).quantize(Decimal("0.1"))


def month_bounds(now: datetime) -> tuple[datetime, datetime]:
    """Start of ``now``'s month and start of the next one, UTC."""
    utc = now.astimezone(UTC)
    start = utc.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    next_month = (start + timedelta(days=32)).replace(day=1)
    return start, next_month


def split_by_month(start: datetime, end: datetime) -> Iterator[tuple[str, Decimal]]:
    """(``YYYY-MM``, hours) pieces of [start, end), months in UTC."""
    while start < end:
        _, next_month = month_bounds(start)
        stop = min(next_month, end)
        yield month_key(start), Decimal(str((stop - start).total_seconds())) / _HOUR
        start = stop


def month_key(now: datetime) -> str:
    return now.astimezone(UTC).strftime("%Y-%m")


def billed_hours(instance: GpuInstance, now: datetime) -> tuple[Decimal, str]:
    """Hours this month since the instance's last start while it bills, and a note."""
    if not instance.state.bills_compute:
        return Decimal(0), f"{instance.state.value}: not billing now; earlier hours unseen"
    if instance.started_at is None:
        return Decimal(0), "start time unknown; hours not counted"
    start, _ = month_bounds(now)
    since = max(instance.started_at.astimezone(UTC), start)
    seconds = max(Decimal(0), Decimal(str((now.astimezone(UTC) - since).total_seconds())))
    note = "since the start of the month" if since == start else "since its last start"
    return seconds / _HOUR, note


def month_to_date_usd(
    instance: GpuInstance, hourly_usd: Decimal | None, now: datetime
) -> Decimal | None:
    """This month's cost of ``instance`` since its last start, to the cent: the one sum
    that ``fleet`` and ``budget`` both show. None when the price is unknown."""
    if hourly_usd is None:
        return None
    hours, _ = billed_hours(instance, now)
    return (hours * hourly_usd).quantize(_CENT)


def estimate_spend(
    instances: Iterable[GpuInstance],
    price_of: Callable[[GpuInstance], Decimal | None],
    now: datetime,
    monthly_usd: Decimal | None = None,
) -> SpendEstimate:
    """Month-to-date spend and forecast of ``instances`` at ``now``."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    start, end = month_bounds(now)
    rows: list[InstanceSpend] = []
    total = burn = Decimal(0)
    unpriced = 0
    for instance in instances:
        hours, note = billed_hours(instance, now)
        hourly = price_of(instance)
        cost = None if hourly is None else hours * hourly
        if hourly is None:
            unpriced += 1
            note = f"{note}; price unknown, not summed"
        else:
            total += hours * hourly
            if instance.state.bills_compute:
                burn += hourly
        rows.append(
            InstanceSpend(instance, hours, hourly, cost, instance.state.bills_compute, note)
        )
    remaining = Decimal(str((end - now.astimezone(UTC)).total_seconds())) / _HOUR
    forecast = total + burn * remaining
    return SpendEstimate(
        month=month_key(now),
        now=now,
        month_start=start,
        month_end=end,
        month_to_date_usd=total.quantize(_CENT),
        burn_hourly_usd=burn.quantize(_CENT),
        forecast_usd=forecast.quantize(_CENT),
        monthly_usd=monthly_usd,
        instances=tuple(rows),
        unpriced=unpriced,
    )


def thresholds_crossed(
    spent: Decimal, monthly_usd: Decimal | None, alert_at_percent: Sequence[float]
) -> list[float]:
    """The alert thresholds (percent of the month's budget) that ``spent`` has reached."""
    if monthly_usd is None or monthly_usd <= 0:
        return []
    return sorted(p for p in alert_at_percent if spent * 100 >= monthly_usd * Decimal(str(p)))


def remaining_budget(monthly_usd: Decimal, spent: Decimal | None) -> Decimal:
    """What is left of the month's budget after ``spent`` (never below zero)."""
    if spent is None:
        return monthly_usd
    return max(Decimal(0), monthly_usd - spent)
