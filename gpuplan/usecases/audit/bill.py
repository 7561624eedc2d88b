"""``gpuplan bill``: read each cloud's actual spend, store it beside the estimate, and
reconcile the two.

- :func:`cost_sources`: the policy's cost sources, from each registered cloud's
  ``cost_sources`` hook (:class:`~gpuplan.providers.cloud_entry.CloudEntry`; the built-in
  clouds read Cost Explorer or a CUR 2.0 export, the billing export in BigQuery, Cost
  Management per listed subscription); a source that cannot be built is a problem
  line, and the others still run.
- :func:`sync`: each source's daily lines for [since, today] into the ledger (the
  window replaced: recent days are revised by the clouds), then gpuplan's estimate for
  the same days from the ledger's sightings. Read-only towards the clouds.
- :func:`reconcile`: per provider, day and instance type up to the last final day,
  estimate vs billed with the gap named (:mod:`gpuplan.core.audit.bill.reconcile`).

Named ``bill reconcile``, not ``reconcile``: :mod:`gpuplan.usecases.lifecycle.reconcile` already
settles the ledger's pending intents after a killed run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal

from gpuplan.core.audit.bill.actuals import Realised, daily_estimates, realised_savings
from gpuplan.core.audit.bill.lines import LAG_DAYS, CostLine, last_final_day
from gpuplan.core.audit.bill.reconcile import ReconRow, Threshold, problems
from gpuplan.core.audit.bill.reconcile import reconcile as reconcile_rows
from gpuplan.core.errors import GpuplanError, InputError
from gpuplan.core.policy import Policy
from gpuplan.ledger import Ledger
from gpuplan.ledger import bill as store
from gpuplan.providers.billing.base import CostSource
from gpuplan.usecases.clouds.extras import needs_extra
from gpuplan.usecases.clouds.registry import entries

DEFAULT_DAYS = 14
LAG_NOTE = (
    f"cost APIs are about a day behind: days after the last final day ({LAG_DAYS} day lag)"
    " may still change and are not reconciled"
)
SourceFactory = Callable[[Policy, Mapping[str, str]], tuple[list[CostSource], list[str]]]


def cost_sources(policy: Policy, environ: Mapping[str, str]) -> tuple[list[CostSource], list[str]]:
    """The policy's cost sources, and a problem line for each that could not be built:
    every registered cloud's ``cost_sources`` hook, in the registry's order, with its
    section of the policy's scope (a missing SDK extra is one problem line)."""
    sources: list[CostSource] = []
    problems_: list[str] = []
    for entry in entries():
        if entry.cost_sources is None:
            continue
        section = policy.scope.section(entry.provider)
        try:
            with needs_extra(f"bill ({entry.cost_api})"):
                found, missing = entry.cost_sources(section, policy.bill, environ)
        except GpuplanError as exc:
            problems_.append(exc.message)
            continue
        sources.extend(found)
        problems_.extend(missing)
    return sources, problems_


@dataclass
class SyncOutcome:
    policy: str
    since: date
    until: date
    """Exclusive: today + 1."""
    final_through: date
    lines: dict[str, int] = field(default_factory=dict)
    """Rows stored per ``provider scope``."""
    estimates: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.problems)


def window(today: date, since: date | None) -> tuple[date, date]:
    """[since, today + 1): ``since`` defaults to :data:`DEFAULT_DAYS` back."""
    start = since if since is not None else today - timedelta(days=DEFAULT_DAYS)
    if start > today:
        raise InputError(f"--since: {start} is after today ({today})")
    if (today - start).days > 400:
        raise InputError(f"--since: {start} is more than 400 days back (cost APIs keep 13 months)")
    return start, today + timedelta(days=1)


def sync(
    policy: Policy, ledger: Ledger, sources: list[CostSource], *, now: datetime,
    since: date | None = None,
) -> SyncOutcome:  # fmt: skip
    """Fetch, store and estimate; see the module docstring."""
    today = now.astimezone(UTC).date()
    start, until = window(today, since)
    outcome = SyncOutcome(policy.name, start, until, last_final_day(today))
    for source in sources:
        try:
            got = source.daily_costs(start, until, policy.bill.team_label)
            scope = source.scope
        except GpuplanError as exc:
            outcome.problems.append(exc.message)
            continue
        written = store.replace_lines(
            ledger, policy.name, source.provider, scope, start, until, got, now
        )
        outcome.lines[f"{source.provider} {scope}"] = written
    seen, damaged = store.seen(ledger, policy.name, datetime.combine(start, time(), tzinfo=UTC))
    outcome.problems.extend(damaged)
    estimated = daily_estimates(seen, policy.bill.team_label)
    outcome.estimates = store.replace_estimates(ledger, policy.name, start, until, estimated, now)
    return outcome


@dataclass
class ReconcileOutcome:
    policy: str
    since: date
    through: date
    rows: list[ReconRow]
    problems: list[str]
    notices: list[str]


def reconcile(
    policy: Policy, ledger: Ledger, *, now: datetime, since: date | None = None
) -> ReconcileOutcome:
    """Estimate vs bill from the ledger (run ``bill sync`` first); no cloud call, no write."""
    today = now.astimezone(UTC).date()
    start, until = window(today, since)
    through = last_final_day(today)
    lines, bad_lines = store.lines(ledger, policy.name, start, until)
    # The estimate from the sightings as they are now (runs since the last sync count);
    # `bill sync` stores the same figure beside the bill it fetched.
    seen, bad_estimates = store.seen(ledger, policy.name, datetime.combine(start, time(), UTC))
    estimates = daily_estimates(seen, policy.bill.team_label)
    b = policy.bill
    threshold = Threshold(Decimal(str(b.gap_percent)), Decimal(b.gap_min_usd))
    rows = reconcile_rows(estimates, lines, threshold, through=through)
    return ReconcileOutcome(
        policy.name, start, through, rows, problems(rows), [*bad_lines, *bad_estimates]
    )


def month_lines(ledger: Ledger, policy: str, now: datetime) -> tuple[list[CostLine], list[str]]:
    """The stored bill of ``now``'s month (every provider and scope)."""
    utc = now.astimezone(UTC)
    first = utc.date().replace(day=1)
    return store.lines(ledger, policy, first, utc.date() + timedelta(days=1))


def realised(ledger: Ledger, policy: str, now: datetime) -> tuple[list[Realised], list[str]]:
    """Billed dollars saved per instance type gpuplan stopped (``savings --policy``):
    the billed day before the type's first stop minus each billed day after it."""
    from gpuplan.ledger import queries

    done, damaged = queries.acted(ledger, policy=policy)
    stops: dict[str, date] = {}
    for a in done:
        day = a.run_started_at.astimezone(UTC).date()
        if a.instance_type and (a.instance_type not in stops or day < stops[a.instance_type]):
            stops[a.instance_type] = day
    if not stops:
        return [], damaged
    first = min(stops.values()) - timedelta(days=DEFAULT_DAYS)
    lines, bad = store.lines(ledger, policy, first, now.astimezone(UTC).date() + timedelta(days=1))
    return realised_savings(stops, lines), [*damaged, *bad]
