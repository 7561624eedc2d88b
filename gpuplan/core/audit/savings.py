"""Savings and waste arithmetic over what the ledger recorded: typed rows in, lines out.

- **Savings**: for each instance gpuplan stopped, hibernated, suspended, deallocated or
  terminated in an applied run, the hours from that run until a later run saw it
  running again with the same ``gpuplan-stopped-at`` tag (else until ``now``), times
  its hourly price; per month and per label value. Compute only.
- **Waste**: GPU-hours and dollars on instances while runs saw them ``idle``: each
  sighting counts the time since the previous sighting of that instance, at most one
  idle window (a lower bound between sparse runs).

Lines are per month and group (:mod:`gpuplan.core.audit.grouping`: a label's value or the
account), months in order and, within a month, dollars descending then name;
:func:`totals` sums them per group over every month. Rows come from every run in the
ledger, whichever shard or scope wrote them.

Pure: rows and ``now`` come in as arguments; months are split with
:func:`gpuplan.core.audit.budget.split_by_month`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from gpuplan.core.audit.budget import split_by_month
from gpuplan.core.audit.grouping import BY_LABEL_TEAM, GroupBy
from gpuplan.core.lifecycle.idle import STOPPED_AT_TAG, IdleVerdict, format_tag_time
from gpuplan.core.lifecycle.instances import InstanceState


@dataclass(frozen=True)
class Acted:
    """One action carried out in an applied run (the ledger's actions + decisions)."""

    run_started_at: datetime
    instance_id: str
    region: str
    instance_type: str
    hourly_usd: Decimal | None
    labels: Mapping[str, str]
    account: str = ""
    """Account, project or subscription ("" where the ledger row does not say)."""


@dataclass(frozen=True)
class Sighting:
    """One instance as one run saw it (the ledger's decisions + runs)."""

    run_started_at: datetime
    window_minutes: int
    instance_id: str
    verdict: IdleVerdict
    state: InstanceState
    labels: Mapping[str, str]
    hourly_usd: Decimal | None
    gpu_count: float
    account: str = ""
    """Account, project or subscription ("" where the ledger row does not say)."""


@dataclass(frozen=True)
class Line:
    month: str
    group: str
    hours: Decimal
    usd: Decimal
    instances: int
    gpu_hours: Decimal = Decimal(0)
    doubtful_usd: Decimal = Decimal(0)
    """Part of ``usd`` on types with active reservations in the region (billed anyway)."""
    ids: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    """The instances counted, so totals over months count each instance once."""


@dataclass
class _Acc:
    hours: Decimal = Decimal(0)
    usd: Decimal = Decimal(0)
    gpu_hours: Decimal = Decimal(0)
    doubtful: Decimal = Decimal(0)
    ids: set[str] = field(default_factory=set)


def restarts(sightings: Iterable[Sighting]) -> dict[tuple[str, str], datetime]:
    """(instance id, stopped-at tag) -> the first run that saw it billing again."""
    out: dict[tuple[str, str], datetime] = {}
    for s in sorted(sightings, key=lambda s: s.run_started_at):
        tag = s.labels.get(STOPPED_AT_TAG)
        if tag and s.state.bills_compute:
            out.setdefault((s.instance_id, tag), s.run_started_at)
    return out


def savings(
    acted: Iterable[Acted],
    sightings: Iterable[Sighting],
    now: datetime,
    by: GroupBy = BY_LABEL_TEAM,
    reserved: Collection[tuple[str, str]] = (),
) -> list[Line]:
    """Compute hours avoided x hourly price, per month and group; savings on
    (region, type) pairs in ``reserved`` are also counted as doubtful."""
    back = restarts(sightings)
    acc: dict[tuple[str, str], _Acc] = defaultdict(_Acc)
    for a in acted:
        if a.hourly_usd is None:
            continue
        end = back.get((a.instance_id, format_tag_time(a.run_started_at)), now)
        doubt = (a.region, a.instance_type) in reserved
        for month, hours in split_by_month(a.run_started_at, end):
            slot = acc[(month, by.name(account=a.account, labels=a.labels))]
            slot.hours += hours
            slot.usd += hours * a.hourly_usd
            slot.doubtful += hours * a.hourly_usd if doubt else Decimal(0)
            slot.ids.add(a.instance_id)
    return _lines(acc)


def waste(
    sightings: Iterable[Sighting], since: datetime, by: GroupBy = BY_LABEL_TEAM
) -> list[Line]:
    """GPU-hours and dollars while instances were seen idle, per month and group."""
    last: dict[str, datetime] = {}
    acc: dict[tuple[str, str], _Acc] = defaultdict(_Acc)
    for s in sorted(sightings, key=lambda s: s.run_started_at):
        if s.run_started_at < since or s.verdict is not IdleVerdict.IDLE:
            continue
        window = timedelta(minutes=s.window_minutes)
        previous = last.get(s.instance_id)
        span = window if previous is None else min(window, s.run_started_at - previous)
        last[s.instance_id] = s.run_started_at
        if span <= timedelta(0):
            continue
        hours = Decimal(span.total_seconds()) / 3600
        group = by.name(account=s.account, labels=s.labels)
        slot = acc[(f"{s.run_started_at:%Y-%m}", group)]
        slot.hours += hours
        slot.usd += hours * (s.hourly_usd or Decimal(0))
        slot.ids.add(s.instance_id)
        slot.gpu_hours += hours * Decimal(str(s.gpu_count))
    return _lines(acc)


def _lines(acc: Mapping[tuple[str, str], _Acc]) -> list[Line]:
    cent = Decimal("0.01")
    lines = [
        Line(
            month,
            group,
            v.hours.quantize(cent),
            v.usd.quantize(cent),
            len(v.ids),
            v.gpu_hours.quantize(cent),
            v.doubtful.quantize(cent),
            frozenset(v.ids),
        )
        for (month, group), v in acc.items()
    ]
    return sorted(lines, key=lambda x: (x.month, -x.usd, x.group))


def totals(lines: Iterable[Line]) -> list[Line]:
    """One line per group over every month (``month`` empty): dollars descending, then
    name; an instance seen in several months counts once."""
    acc: dict[str, list[Line]] = defaultdict(list)
    for line in lines:
        acc[line.group].append(line)
    out = [total(items, group) for group, items in acc.items()]
    return sorted(out, key=lambda x: (-x.usd, x.group))


def total(lines: Iterable[Line], group: str = "total") -> Line:
    """The sum of ``lines`` (amounts already rounded to cents, so the groups' totals add
    up to the ungrouped total exactly)."""
    items = list(lines)

    def add(name: str) -> Decimal:
        return sum((getattr(x, name) for x in items), Decimal(0))

    ids = frozenset().union(*(x.ids for x in items))
    return Line("", group, add("hours"), add("usd"), len(ids), add("gpu_hours"),
                add("doubtful_usd"), ids)  # fmt: skip
