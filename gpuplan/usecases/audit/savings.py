"""Savings and waste from the ledger: what stopping idle GPUs saved, what idling cost.

Both read the ledger's actions and decisions tables through typed queries
(:mod:`gpuplan.ledger.queries`; no cloud call); the arithmetic is
:mod:`gpuplan.core.audit.savings`:

- **Savings** (``gpuplan savings``): for each instance gpuplan stopped, hibernated or
  terminated, the hours from that action until a later run saw it running again with
  the same ``gpuplan-stopped-at`` tag (else until now), times its hourly price; summed
  per month and per group (``--by label:team`` by default, or ``account``). Compute
  only: disks, IPs and commitments keep billing, and an instance restarted between runs
  counts until the first run that saw it.
- **Waste** (``gpuplan fleet --report``): GPU-hours and dollars spent on instances while
  runs saw them ``idle``: each sighting counts the time since the previous sighting of
  that instance, at most one idle window (a lower bound between sparse runs).

Both read every run in the ledger, whichever shard or scope wrote it, and group in
Python (:mod:`gpuplan.core.audit.grouping`, the same rule ``gpuplan audit`` uses).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from datetime import UTC, datetime, timedelta

from gpuplan.core.audit import savings as core
from gpuplan.core.audit.grouping import BY_LABEL_TEAM, GroupBy
from gpuplan.core.audit.savings import Line
from gpuplan.ledger import Ledger, queries

COMPUTE_ONLY = (
    "compute only: EBS volumes, Elastic IPs and commitments (reserved instances, "
    "savings plans) keep billing while an instance is stopped"
)


def savings(
    ledger: Ledger,
    now: datetime,
    by: GroupBy = BY_LABEL_TEAM,
    reserved: Collection[tuple[str, str]] = (),
    policy: str | None = None,
) -> tuple[list[Line], list[str]]:
    """Savings lines from the ledger's actions and decisions; damaged rows named."""
    done, bad_actions = queries.acted(ledger, policy=policy)
    seen, bad_decisions = queries.sightings(ledger, policy=policy)
    return core.savings(done, seen, now, by, reserved), [*bad_actions, *bad_decisions]


def waste(
    ledger: Ledger, since: datetime, by: GroupBy = BY_LABEL_TEAM
) -> tuple[list[Line], list[str]]:
    """Waste lines from the ledger's decisions since ``since``; damaged rows named."""
    seen, damaged = queries.sightings(ledger, since=since)
    return core.waste(seen, since, by), damaged


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
