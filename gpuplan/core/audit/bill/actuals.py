"""Budgets on actuals: the bill up to its last day, the estimate after, per team.

- :func:`daily_estimates`: the ledger's sightings as list-price estimate lines per
  provider, day, instance type and team (each sighting of a billing instance counts
  the time since its previous sighting, at most one idle window: a lower bound).
- :func:`unbilled_usd`: what running instances cost at list price after the bill's
  last day, the part of the month the bill cannot show yet.
- :func:`chargeback`: per group (a label's value or the account), actual, estimate and
  the difference.
- :func:`realised_savings`: per instance type gpuplan stopped, the billed instance cost
  on the day before the first stop minus each billed day after it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from gpuplan.core.audit.bill.lines import CENT, ZERO, CostKind, CostLine, EstimateLine
from gpuplan.core.audit.grouping import GroupBy, GroupKind
from gpuplan.core.lifecycle.instances import GpuInstance

_HOUR = Decimal(3600)


@dataclass(frozen=True)
class Seen:
    """One instance as one run saw it (the ledger's decisions and runs)."""

    provider: str
    account: str
    instance_id: str
    instance_type: str
    seen_at: datetime
    window_minutes: int
    bills: bool
    hourly_usd: Decimal | None
    labels: Mapping[str, str]


def daily_estimates(seen: Iterable[Seen], team_label: str) -> list[EstimateLine]:
    """Estimate lines per provider, day, type and team from the ledger's sightings."""
    acc: dict[tuple[str, date, str, str, str], list[Decimal]] = defaultdict(lambda: [ZERO, ZERO])
    last: dict[tuple[str, str], datetime] = {}
    for s in sorted(seen, key=lambda s: s.seen_at):
        key = (s.provider, s.instance_id)
        window = timedelta(minutes=s.window_minutes)
        before = last.get(key)
        last[key] = s.seen_at
        if not s.bills or s.hourly_usd is None:
            continue
        span = window if before is None else min(window, s.seen_at - before)
        hours = Decimal(str(span.total_seconds())) / _HOUR
        day = s.seen_at.astimezone(UTC).date()
        cell = acc[(s.provider, day, s.instance_type, s.labels.get(team_label, ""), s.account)]
        cell[0] += hours * s.hourly_usd
        cell[1] += hours
    return [
        EstimateLine(p, d, t, usd.quantize(CENT), hours, team, scope)
        for (p, d, t, team, scope), (usd, hours) in sorted(acc.items())
    ]


def unbilled_usd(
    instances: Iterable[GpuInstance],
    price_of: Callable[[GpuInstance], Decimal | None],
    since: datetime,
    now: datetime,
) -> Decimal:
    """List-price cost from ``since`` (the end of the bill's last day) to ``now`` of the
    instances billing now; hours before an instance's last start are not seen."""
    out = ZERO
    for instance in instances:
        price = price_of(instance)
        if price is None or not instance.state.bills_compute or instance.started_at is None:
            continue
        start = max(since, instance.started_at.astimezone(UTC))
        seconds = max(ZERO, Decimal(str((now - start).total_seconds())))
        out += seconds / _HOUR * price
    return out.quantize(CENT)


def end_of(day: date) -> datetime:
    """The first instant after ``day`` (UTC)."""
    return datetime.combine(day + timedelta(days=1), time(), tzinfo=UTC)


def group_of(line: CostLine, by: GroupBy) -> str:
    """The report group of a cost line, by the rule every report uses."""
    if by.kind is GroupKind.ACCOUNT:
        return by.name(account=line.scope)
    return by.name(labels={by.label: line.team} if line.team else {})


@dataclass(frozen=True)
class ChargebackRow:
    group: str
    actual_usd: Decimal
    estimate_usd: Decimal

    @property
    def difference_usd(self) -> Decimal:
        """Actual minus estimate: positive when the bill is higher."""
        return self.actual_usd - self.estimate_usd


def chargeback(
    lines: Iterable[CostLine], estimates: Mapping[str, Decimal], by: GroupBy
) -> list[ChargebackRow]:
    """Actual (the bill) beside the estimate per group; groups in either side appear.
    Lines without the label (discounts, shared commitments) form a group of their own,
    so the groups add up to the bill."""
    actual: dict[str, Decimal] = defaultdict(Decimal)
    for line in lines:
        actual[group_of(line, by)] += line.usd
    groups = sorted(set(actual) | set(estimates))
    rows = [
        ChargebackRow(g, actual.get(g, ZERO).quantize(CENT), estimates.get(g, ZERO).quantize(CENT))
        for g in groups
    ]
    return sorted(rows, key=lambda r: (-r.actual_usd, r.group))


@dataclass(frozen=True)
class Realised:
    """Billed dollars saved on one instance type after gpuplan first stopped one."""

    instance_type: str
    stopped_on: date
    baseline_usd: Decimal
    """Billed instance cost of the type on the last billed day before the stop."""
    days: int
    usd: Decimal


def realised_savings(stops: Mapping[str, date], lines: Iterable[CostLine]) -> list[Realised]:
    """Per instance type in ``stops`` (its first stop's day): the baseline day's billed
    cost minus each billed day's after the stop (never below zero per day). Types
    without a billed day before or after the stop are left out: nothing to compare."""
    daily: dict[str, dict[date, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    for line in lines:
        if line.kind in (CostKind.INSTANCE, CostKind.COMMITMENT) and line.instance_type:
            daily[line.instance_type][line.day] += line.usd
    out: list[Realised] = []
    for kind, stopped in sorted(stops.items()):
        days = daily.get(kind, {})
        before = [d for d in days if d < stopped]
        after = sorted(d for d in days if d > stopped)
        if not before or not after:
            continue
        baseline = days[max(before)]
        saved = sum((max(ZERO, baseline - days[d]) for d in after), ZERO)
        out.append(
            Realised(kind, stopped, baseline.quantize(CENT), len(after), saved.quantize(CENT))
        )
    return out


@dataclass(frozen=True)
class BilledPart:
    """The month so far on actuals: the bill through its last day, then the estimate."""

    billed_usd: Decimal
    """What the clouds billed this month through ``billed_through``."""
    billed_through: date
    unbilled_usd: Decimal
    """List-price estimate after the bill's last day (and for clouds without a bill)."""
    providers: tuple[str, ...]
    """Clouds whose bill is counted; other clouds count at their estimate for the month."""

    @property
    def month_to_date_usd(self) -> Decimal:
        return self.billed_usd + self.unbilled_usd


def billed_part(
    lines: Iterable[CostLine],
    instances: Iterable[GpuInstance],
    price_of: Callable[[GpuInstance], Decimal | None],
    month_start: datetime,
    now: datetime,
) -> BilledPart | None:
    """The month to date on actuals, or None when the ledger holds no bill this month.
    Instances of a billed cloud count from the end of the bill's last day; instances of
    a cloud without a bill count from the start of the month, as the estimate does."""
    rows = [line for line in lines if month_start.date() <= line.day < now.date()]
    if not rows:
        return None
    through = max(line.day for line in rows)
    billed = {line.provider for line in rows}
    listed = list(instances)
    after = unbilled_usd([i for i in listed if i.provider.value in billed], price_of,
                         end_of(through), now)  # fmt: skip
    others = unbilled_usd([i for i in listed if i.provider.value not in billed], price_of,
                          month_start, now)  # fmt: skip
    total = sum((line.usd for line in rows), ZERO).quantize(CENT)
    return BilledPart(total, through, after + others, tuple(sorted(billed)))
