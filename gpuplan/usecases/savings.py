"""Savings and waste from the ledger: what stopping idle GPUs saved, what idling cost.

Both read the stop-idle run summaries the ledger keeps (no cloud call):

- **Savings** (``gpuplan savings``): for each instance gpuplan stopped, hibernated or
  terminated, the hours from that action until a later run saw it running again with
  the same ``gpuplan-stopped-at`` tag (else until now), times its hourly price; summed
  per month and per label value (``team`` by default). Compute only: disks, IPs and
  commitments keep billing, and an instance restarted between runs counts until the
  first run that saw it.
- **Waste** (``gpuplan fleet --report``): GPU-hours and dollars spent on instances while
  runs saw them ``idle``: each sighting counts the time since the previous sighting of
  that instance, at most one idle window (a lower bound between sparse runs).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from gpuplan.core.idle import format_tag_time
from gpuplan.ledger import RunRecord

COMPUTE_ONLY = (
    "compute only: EBS volumes, Elastic IPs and commitments (reserved instances, "
    "savings plans) keep billing while an instance is stopped"
)


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


@dataclass
class _Acc:
    hours: Decimal = Decimal(0)
    usd: Decimal = Decimal(0)
    gpu_hours: Decimal = Decimal(0)
    doubtful: Decimal = Decimal(0)
    ids: set[str] = field(default_factory=set)


def _group(labels: Mapping[str, str], key: str) -> str:
    return labels.get(key) or "(no label)"


def _money(text: str) -> Decimal | None:
    return Decimal(text) if text else None


def _split_by_month(start: datetime, end: datetime) -> Iterable[tuple[str, Decimal]]:
    """(YYYY-MM, hours) pieces of [start, end)."""
    while start < end:
        nxt = (start.replace(day=1, hour=0, minute=0, second=0, microsecond=0) +
               timedelta(days=32)).replace(day=1)  # fmt: skip
        stop = min(nxt, end)
        yield f"{start:%Y-%m}", Decimal((stop - start).total_seconds()) / 3600
        start = stop


def savings(
    runs: Iterable[RunRecord],
    now: datetime,
    by: str = "team",
    reserved: Collection[tuple[str, str]] = (),
) -> list[Line]:
    """Compute hours avoided x hourly price, per month and label value.

    ``reserved`` holds (region, instance type) pairs with active reservations: savings
    on those are also counted as doubtful.
    """
    applied = sorted((r for r in runs if r.kind == "stop-idle"), key=lambda r: r.started_at)
    restarts: dict[tuple[str, str], datetime] = {}
    for run in applied:
        for seen in run.summary.get("restarted", ()):
            key = (seen["instance_id"], seen["stopped_at"])
            restarts.setdefault(key, run.started_at)
    acc: dict[tuple[str, str], _Acc] = defaultdict(_Acc)
    for run in applied:
        if run.dry_run:
            continue
        for acted in run.summary.get("acted", ()):
            price = _money(acted.get("hourly_usd", ""))
            if price is None:
                continue
            key = (acted["instance_id"], format_tag_time(run.started_at))
            end = restarts.get(key, now)
            doubt = (acted.get("region"), acted.get("instance_type")) in reserved
            for month, hours in _split_by_month(run.started_at, end):
                slot = acc[(month, _group(acted.get("labels", {}), by))]
                slot.hours += hours
                slot.usd += hours * price
                slot.doubtful += hours * price if doubt else Decimal(0)
                slot.ids.add(acted["instance_id"])
    return _lines(acc)


def waste(runs: Iterable[RunRecord], since: datetime, by: str = "team") -> list[Line]:
    """GPU-hours and dollars while instances were seen idle, per month and label value."""
    ordered = sorted(
        (r for r in runs if r.kind == "stop-idle" and r.started_at >= since),
        key=lambda r: r.started_at,
    )
    last: dict[str, datetime] = {}
    acc: dict[tuple[str, str], _Acc] = defaultdict(_Acc)
    for run in ordered:
        window = timedelta(minutes=int(run.summary.get("window_minutes", 60)))
        for seen in run.summary.get("idle", ()):
            iid = seen["instance_id"]
            previous = last.get(iid)
            span = window if previous is None else min(window, run.started_at - previous)
            last[iid] = run.started_at
            if span <= timedelta(0):
                continue
            hours = Decimal(span.total_seconds()) / 3600
            slot = acc[(f"{run.started_at:%Y-%m}", _group(seen.get("labels", {}), by))]
            slot.hours += hours
            slot.usd += hours * (_money(seen.get("hourly_usd", "")) or Decimal(0))
            slot.ids.add(iid)
            slot.gpu_hours += hours * Decimal(str(seen.get("gpu_count", 0)))
    return _lines(acc)


def _lines(acc: Mapping[tuple[str, str], _Acc]) -> list[Line]:
    cent = Decimal("0.01")
    return [
        Line(
            month,
            group,
            v.hours.quantize(cent),
            v.usd.quantize(cent),
            len(v.ids),
            v.gpu_hours.quantize(cent),
            v.doubtful.quantize(cent),
        )
        for (month, group), v in sorted(acc.items())
    ]


def parse_since(text: str, now: datetime) -> datetime:
    """``7d``, ``24h``, ``90m`` before ``now``, or an ISO date."""
    from gpuplan.core.errors import InputError

    units = {"d": "days", "h": "hours", "m": "minutes", "w": "weeks"}
    raw = text.strip().lower()
    if raw[:-1].isascii() and raw[:-1].isdigit() and raw[-1:] in units:
        try:
            return now - timedelta(**{units[raw[-1]]: int(raw[:-1][:12])})
        except (OverflowError, ValueError):
            raise InputError(f"--since: {text!r} reaches before year 1") from None
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        raise InputError(f"--since: expected e.g. 7d, 24h or 2026-12-01, got {text!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def parse_by(text: str) -> str:
    """``label:team`` -> ``team``."""
    from gpuplan.core.errors import InputError

    if not text.startswith("label:") or not text[6:]:
        raise InputError(f"--by: expected label:KEY (e.g. label:team), got {text!r}")
    return text[6:]


def reserved_pairs(providers: Iterable[object]) -> tuple[set[tuple[str, str]], list[str]]:
    """(region, type) pairs with active reservations, from every provider that can say;
    a problem line for each that failed (its savings then stay unmarked)."""
    from gpuplan.core.errors import GpuplanError
    from gpuplan.providers.base import ReservationAware

    pairs: set[tuple[str, str]] = set()
    problems: list[str] = []
    for p in providers:
        if not isinstance(p, ReservationAware):
            continue
        try:
            pairs.update((p.region, kind) for kind in p.reserved_types())
        except GpuplanError as exc:
            problems.append(f"reservations not checked: {exc.message}")
    return pairs, problems
