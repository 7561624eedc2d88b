"""``gpuplan budget``: estimate month-to-date spend in a policy's scope, record it, alert.

Steps: build the providers in scope (registry), list their instances, keep those the
policy governs, price each (the provider's price, else the catalog's for its pricing
model), estimate (pure core), record the snapshot in the ledger, then send one webhook
alert per threshold crossed this month that was not sent before. A provider or an
alert that fails is reported and the run goes on.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from gpuplan.core.audit.alerts import AlertClaim, AlertStatus
from gpuplan.core.audit.bill.actuals import BilledPart, ChargebackRow, billed_part, chargeback
from gpuplan.core.audit.bill.lines import CostLine
from gpuplan.core.audit.budget import BLIND_SPOTS, SpendEstimate, estimate_spend, thresholds_crossed
from gpuplan.core.audit.grouping import GroupBy
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.errors import GpuplanError
from gpuplan.core.lifecycle.instances import GpuInstance
from gpuplan.core.policy import Policy, out_of_scope_reason
from gpuplan.ledger import Ledger, SpendRecord, rows
from gpuplan.providers.base import CloudAdapter
from gpuplan.providers.webhook import Notifier
from gpuplan.usecases.clouds.adapters import ProviderRegistry, build_adapters
from gpuplan.usecases.lifecycle.concurrency import SERIAL, Concurrency, Service
from gpuplan.usecases.lifecycle.survey import listing_failed

ALERT_CLAIM_MINUTES = 15
"""How long a budget alert's claim keeps other budget runs from sending it."""


@dataclass(frozen=True)
class AlertOutcome:
    threshold_percent: float
    status: AlertStatus
    """``claimed`` when another budget run holds the alert's claim and is sending it."""
    detail: str = ""


@dataclass
class BudgetOutcome:
    policy: str
    estimate: SpendEstimate
    problems: list[str] = field(default_factory=list)
    alerts: list[AlertOutcome] = field(default_factory=list)
    out_of_scope: int = 0
    recorded: bool = True
    """Whether the estimate went into the ledger (not when a provider could not be listed)."""
    chargeback: list[ChargebackRow] = field(default_factory=list)
    """Per group (``budget --by``): the bill this month beside the estimate."""
    billed: BilledPart | None = None
    """The month on actuals (``gpuplan bill sync``): the bill, then the estimate after it.
    When present, alerts are judged on it instead of the list-price estimate."""

    @property
    def failed(self) -> bool:
        """Something could not be seen or delivered: the run only partly worked."""
        return bool(self.problems) or any(a.status is AlertStatus.FAILED for a in self.alerts)


def list_in_scope(
    policy: Policy,
    registry: ProviderRegistry,
    environ: Mapping[str, str],
    catalog: Catalog | None = None,
    concurrency: Concurrency = SERIAL,
) -> tuple[list[GpuInstance], list[str], int]:
    """Instances the policy governs, problem lines (one per scope that could not be
    built or listed, named), and how many were out of scope. Scopes are listed
    ``concurrency`` at a time; everything comes back in the scopes' order."""
    fleet = build_adapters(policy, catalog, environ, registry)
    problems = list(fleet.problems)
    kept: list[GpuInstance] = []
    skipped = 0

    def listed(adapter: CloudAdapter) -> list[GpuInstance] | str:
        try:
            with concurrency.hold(adapter.provider, Service.LISTING):
                return adapter.list_instances()
        except GpuplanError as exc:
            return listing_failed(adapter, exc.message)

    for answer in concurrency.map(listed, fleet.adapters):
        if isinstance(answer, str):
            problems.append(answer)
            continue
        for instance in answer:
            if out_of_scope_reason(instance, policy) is None:
                kept.append(instance)
            else:
                skipped += 1
    return kept, problems, skipped


def catalog_pricer(catalog: Catalog | None) -> Callable[[GpuInstance], Decimal | None]:
    """A ``price_of(instance)``: the provider's price, else the catalog's, else None."""
    index = {} if catalog is None else {o.key: o for o in catalog.offers}

    def price_of(instance: GpuInstance) -> Decimal | None:
        if instance.hourly_usd is not None:
            return instance.hourly_usd
        offer = index.get((instance.provider.value, instance.instance_type, instance.region))
        return None if offer is None else offer.price(instance.pricing)

    return price_of


def run_budget(
    policy: Policy,
    *,
    ledger: Ledger,
    registry: ProviderRegistry,
    environ: Mapping[str, str],
    now: datetime,
    notifier: Notifier | None,
    catalog: Catalog | None = None,
    concurrency: Concurrency = SERIAL,
    by: GroupBy | None = None,
) -> BudgetOutcome:
    """Estimate, record and alert; see the module docstring. ``by``: a chargeback table
    per group (actual, estimate, difference)."""
    instances, problems, skipped = list_in_scope(policy, registry, environ, catalog, concurrency)
    estimate = estimate_spend(instances, catalog_pricer(catalog), now, policy.budget.monthly_usd)
    outcome = BudgetOutcome(policy.name, estimate, problems, out_of_scope=skipped)
    lines = _month_bill(policy, ledger, estimate)
    outcome.billed = billed_part(_policy_part(policy, lines), instances, catalog_pricer(catalog),
                                 estimate.month_start, estimate.now)  # fmt: skip
    if by is not None:
        outcome.chargeback = chargeback(lines, _estimate_by(estimate, by), by)
    if problems:
        # A partial listing would understate the month and overstate what is left for
        # the planner; its spend is still a lower bound, so crossed alerts stay true.
        outcome.recorded = False
    else:
        ledger.record_spend(
            SpendRecord(
                policy=policy.name,
                month=estimate.month,
                recorded_at=now,
                month_to_date_usd=estimate.month_to_date_usd,
                forecast_usd=estimate.forecast_usd,
                monthly_usd=estimate.monthly_usd,
                instances=len(instances),
                detail={"unpriced": estimate.unpriced, "out_of_scope": skipped},
            )
        )
    outcome.alerts = send_alerts(policy, estimate, ledger, notifier, now, billed=outcome.billed)
    return outcome


def _month_bill(policy: Policy, ledger: Ledger, estimate: SpendEstimate) -> list[CostLine]:
    """This month's stored bill (``gpuplan bill sync``); damaged rows become notices."""
    from gpuplan.usecases.audit.bill import month_lines

    lines, damaged = month_lines(ledger, policy.name, estimate.now)
    ledger.damaged.extend(rows.DamagedRow("bill_lines", "-", d) for d in damaged)
    return lines


def _policy_part(policy: Policy, lines: list[CostLine]) -> list[CostLine]:
    """The lines a budget counts: a policy whose ``scope.match_labels`` names the team
    label counts that team's lines only (the bill covers whole accounts, the policy one
    team; discounts and shared fees carry no team and are left out)."""
    team = policy.scope.match_labels.get(policy.bill.team_label)
    return lines if team is None else [line for line in lines if line.team == team]


def _estimate_by(estimate: SpendEstimate, by: GroupBy) -> dict[str, Decimal]:
    out: dict[str, Decimal] = {}
    for s in estimate.instances:
        name = by.name(account=s.instance.account, labels=s.instance.labels)
        out[name] = out.get(name, Decimal(0)) + (s.cost_usd or Decimal(0))
    return out


def send_alerts(
    policy: Policy,
    estimate: SpendEstimate,
    ledger: Ledger,
    notifier: Notifier | None,
    now: datetime,
    *,
    billed: BilledPart | None = None,
) -> list[AlertOutcome]:
    """One message per newly crossed threshold; remembered only once delivered. With
    actuals (``billed``) the thresholds are judged on them, not on list prices."""
    from gpuplan.ledger import budget_alerts as claims

    spent = estimate.month_to_date_usd if billed is None else billed.month_to_date_usd
    crossed = thresholds_crossed(spent, estimate.monthly_usd, policy.budget.alert_at_percent)
    token, until = secrets.token_hex(6), now + timedelta(minutes=ALERT_CLAIM_MINUTES)
    key = (policy.name, estimate.month)
    outcomes: list[AlertOutcome] = []
    for percent in crossed:
        if ledger.alert_sent(*key, percent):
            outcomes.append(AlertOutcome(percent, AlertStatus.ALREADY_SENT))
            continue
        if notifier is None:
            outcomes.append(AlertOutcome(percent, AlertStatus.NO_WEBHOOK, "set notify.webhook_url"))
            continue
        holder = claims.claim_budget_alert(ledger, *key, percent, token=token, at=now, until=until)
        if holder is not None:  # sent meanwhile, or another budget run is sending it now
            status = AlertStatus.ALREADY_SENT if holder is AlertClaim.SENT else AlertStatus.CLAIMED
            outcomes.append(AlertOutcome(percent, status))
            continue
        delivery = notifier.send(alert_text(policy, estimate, percent, billed))
        if delivery.ok:
            claims.confirm_budget_alert(ledger, *key, percent, token=token, at=now)
            outcomes.append(AlertOutcome(percent, AlertStatus.SENT))
        else:
            claims.release_budget_alert(ledger, *key, percent, token=token)
            outcomes.append(
                AlertOutcome(percent, AlertStatus.FAILED, delivery.error or "not delivered")
            )
    return outcomes


def alert_text(
    policy: Policy, estimate: SpendEstimate, percent: float, billed: BilledPart | None = None
) -> str:
    if billed is not None:
        return (
            f"gpuplan: policy {policy.name} has spent ${billed.month_to_date_usd:,} of"
            f" ${estimate.monthly_usd:,} in {estimate.month} (threshold {percent:g}%):"
            f" ${billed.billed_usd:,} billed through {billed.billed_through}"
            f" ({', '.join(billed.providers)}) + ${billed.unbilled_usd:,} estimated since"
            " (cost data is about a day behind)."
        )
    return (
        f"gpuplan: policy {policy.name} has spent an estimated ${estimate.month_to_date_usd:,}"
        f" of ${estimate.monthly_usd:,} in {estimate.month} ({estimate.percent_used}%,"
        f" threshold {percent:g}%). Forecast for the month at the current burn"
        f" (${estimate.burn_hourly_usd:,}/h): ${estimate.forecast_usd:,}."
        " Estimate from running instances only; terminated instances are not seen."
    )


def budget_record(outcome: BudgetOutcome) -> dict[str, Any]:
    """The public JSON shape of a budget run."""
    e = outcome.estimate
    return {
        "policy": outcome.policy,
        "month": e.month,
        "now": e.now,
        "monthly_usd": e.monthly_usd,
        "month_to_date_usd": e.month_to_date_usd,
        "percent_used": e.percent_used,
        "burn_hourly_usd": e.burn_hourly_usd,
        "forecast_usd": e.forecast_usd,
        "percent_forecast": e.percent_forecast,
        "instances": [
            {
                "provider": s.instance.provider,
                "region": s.instance.region,
                "instance_id": s.instance.instance_id,
                "instance_type": s.instance.instance_type,
                "state": s.instance.state,
                "pricing": s.instance.pricing,
                "hours": s.hours.quantize(Decimal("0.01")),
                "hourly_usd": s.hourly_usd,
                "cost_usd": None if s.cost_usd is None else s.cost_usd.quantize(Decimal("0.01")),
                "note": s.note,
            }
            for s in e.instances
        ],
        "unpriced": e.unpriced,
        "out_of_scope": outcome.out_of_scope,
        "alerts": [
            {"threshold_percent": a.threshold_percent, "status": a.status, "detail": a.detail}
            for a in outcome.alerts
        ],
        "recorded": outcome.recorded,
        "basis": "estimate" if outcome.billed is None else "actual",
        "actual": None
        if outcome.billed is None
        else {
            "billed_usd": outcome.billed.billed_usd,
            "billed_through": outcome.billed.billed_through,
            "unbilled_estimate_usd": outcome.billed.unbilled_usd,
            "month_to_date_usd": outcome.billed.month_to_date_usd,
            "percent_used": _percent(outcome.billed.month_to_date_usd, e.monthly_usd),
            "providers": list(outcome.billed.providers),
        },
        "chargeback": [
            {
                "group": c.group,
                "actual_usd": c.actual_usd,
                "estimate_usd": c.estimate_usd,
                "difference_usd": c.difference_usd,
            }
            for c in outcome.chargeback
        ],
        "problems": outcome.problems,
        "cannot_see": list(BLIND_SPOTS),
    }


def _percent(amount: Decimal, budget: Decimal | None) -> Decimal | None:
    if budget is None or budget <= 0:
        return None
    return (amount * 100 / budget).quantize(Decimal("0.1"))
