"""``policy check --db``: a schedule that would have stopped busy machines, from the ledger.

The last week of the ledger's history (seven days back from its latest run of this
policy, ``stop-idle`` and ``schedule`` runs alike) is read; each sighting of a running
instance judged *busy* is placed in the schedule its tags pick
(:meth:`~gpuplan.core.policy.schedules.Schedules.pick`); one that falls in that
schedule's off-hours is work the schedule would have stopped. One warning per schedule,
naming how many instances and one example (local time); no warning without a ledger,
without schedules, or when nothing was busy off-hours.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from datetime import timedelta
from zoneinfo import ZoneInfo

from gpuplan.core.audit.savings import Sighting
from gpuplan.core.errors import InputError
from gpuplan.core.lifecycle.idle import IdleVerdict
from gpuplan.core.lifecycle.schedule_clock import period_at
from gpuplan.core.policy import Policy
from gpuplan.core.wording import plural
from gpuplan.ledger import Ledger
from gpuplan.ledger.queries import sightings
from gpuplan.ledger.store import existing_ledger
from gpuplan.usecases.policy import CheckResult

LOOKBACK = timedelta(days=7)


def busy_off_hours(policy: Policy, ledger: Ledger) -> list[str]:
    """Warnings (``schedules.named.<name>: ...``), one per schedule that would stop work."""
    if not policy.schedules.named:
        return []
    seen: list[Sighting] = []
    for kind in ("stop-idle", "schedule"):
        found, _damaged = sightings(ledger, kind=kind, policy=policy.name)
        seen.extend(found)
    if not seen:
        return []
    since = max(s.run_started_at for s in seen) - LOOKBACK
    hits: dict[str, dict[str, Sighting]] = defaultdict(dict)
    for s in seen:
        if s.run_started_at < since or s.verdict is not IdleVerdict.BUSY:
            continue
        name, _why = policy.schedules.pick(dict(s.labels))
        if name is None:
            continue
        if not period_at(policy.schedules.named[name], s.run_started_at).on:
            hits[name].setdefault(s.instance_id, s)
    out = []
    for name, busy in sorted(hits.items()):
        zone = ZoneInfo(policy.schedules.named[name].timezone)
        first = min(busy.values(), key=lambda s: s.run_started_at)
        when = first.run_started_at.astimezone(zone).strftime("%a %Y-%m-%d %H:%M")
        out.append(
            f"schedules.named.{name}: would have stopped "
            f"{plural(len(busy), 'busy instance')} in the last week of the ledger "
            f"(e.g. {first.instance_id}, busy at {when} {zone.key}); check its hours and "
            "time zone, or tag such instances off"
        )
    return out


def with_ledger_warnings(results: list[CheckResult], db: str) -> list[CheckResult]:
    """``results`` with :func:`busy_off_hours` warnings added to each valid policy; the
    ledger at ``db`` must exist (a missing one is bad input, never created)."""
    ledger = existing_ledger(db)
    if ledger is None:
        raise InputError(f"--db {db}: no ledger there (policy check never creates one)")
    with ledger:
        return [
            replace(r, warnings=(*r.warnings, *busy_off_hours(r.policy, ledger)))
            if r.ok and r.policy is not None
            else r
            for r in results
        ]
