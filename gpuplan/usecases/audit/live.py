"""``gpuplan audit --policy``: the audit over a policy's live fleet, and its alerts.

Lists every scope, then reads utilisation (per GPU), GPU memory and CPU for all running
instances in one batched ``fetch_utilisation`` per scope over the period, at hourly (or
finer) aggregates. Sources return the max per period, so busy dollars from live data
are an upper bound (waiting a lower bound); traces give means.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from gpuplan.core.audit.advice import InstanceAudit, audit_instance
from gpuplan.core.audit.alerts import AlertClaim, AlertStatus
from gpuplan.core.audit.split import AuditRule, Subject, Usage
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.errors import GpuplanError
from gpuplan.core.lifecycle.instances import GpuInstance, HostSamples
from gpuplan.core.policy.models import AuditSettings, Policy
from gpuplan.ledger.audit_alerts import (
    AlertKey,
    audit_alert_sent,
    claim_audit_alert,
    confirm_audit_alert,
    release_audit_alert,
)
from gpuplan.ledger.store import Ledger
from gpuplan.providers.base import CloudAdapter
from gpuplan.providers.webhook import Notifier
from gpuplan.usecases.lifecycle.concurrency import SERIAL, Concurrency, Service


@dataclass
class LiveAudit:
    audits: list[InstanceAudit] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Instances left out, each with its reason (no price, no metrics)."""
    listed: list[GpuInstance] = field(default_factory=list)
    """Every instance listed (the exempt dollars are read from their tags)."""


@dataclass(frozen=True)
class AlertOutcome:
    instance_id: str
    status: AlertStatus
    detail: str = ""


def build_adapters(policy: Policy, catalog: Catalog) -> tuple[list[CloudAdapter], list[str]]:
    """The one adapter builder of the lifecycle commands; its problems travel up."""
    import os

    from gpuplan.usecases.clouds.adapters import build_adapters

    fleet = build_adapters(policy, catalog, os.environ)
    return list(fleet.adapters), list(fleet.problems)


def subject_of(inst: GpuInstance, settings: AuditSettings) -> Subject | None:
    if inst.hourly_usd is None:
        return None
    restartable = inst.labels.get(settings.restartable_label, "").lower() in ("true", "yes", "1")
    return Subject(
        instance_id=inst.instance_id, provider=inst.provider, region=inst.region,
        instance_type=inst.instance_type, hourly_usd=inst.hourly_usd,
        pricing=inst.pricing,
        gpu_count=max(1, int(inst.gpu_count)), restartable=restartable,
        account=inst.account, labels=dict(inst.labels), name=inst.name or "",
        attributes=dict(inst.attributes), refused=inst.risk.refused,
    )  # fmt: skip


def usage_of(samples: HostSamples, starts: Sequence[datetime], period_minutes: int) -> Usage:
    gpus = sorted(samples.utilisation, key=lambda g: (len(g), g))
    per_gpu = [tuple(samples.utilisation[g].get(t) for g in gpus) for t in starts]
    memory = [max((s[t] for s in samples.memory.values() if t in s), default=None) for t in starts]
    cpu = [samples.cpu.get(t) for t in starts]
    return Usage(period_minutes, per_gpu, memory, cpu)


def aligned_window(
    start: datetime, now: datetime, period_minutes: int
) -> tuple[datetime, datetime]:
    """Whole periods from ``start`` up to the last period boundary before ``now``."""
    step = timedelta(minutes=period_minutes)
    origin = datetime.min.replace(tzinfo=now.tzinfo)
    end = origin + (now - origin) // step * step
    return end - max(timedelta(0), end - start) // step * step, end


def period_starts(start: datetime, end: datetime, period_minutes: int) -> list[datetime]:
    step = timedelta(minutes=period_minutes)
    count = int((end - start) / step)
    return [start + i * step for i in range(count)]


def audit_fleet(
    adapters: Sequence[CloudAdapter], catalog: Catalog, rule: AuditRule,
    settings: AuditSettings, *, start: datetime, end: datetime, period_minutes: int,
    progress: Callable[[int, int, str], None] | None = None,
    concurrency: Concurrency = SERIAL,
) -> LiveAudit:  # fmt: skip
    """Every scope listed and read ``concurrency`` at a time (``progress(index, total,
    scope)`` as each starts); the audits sorted by dollars at stake per month, descending,
    then instance id."""
    out = LiveAudit()
    starts = period_starts(start, end, period_minutes)

    def one(indexed: tuple[int, CloudAdapter]) -> LiveAudit:
        index, adapter = indexed
        if progress is not None:
            progress(index, len(adapters), adapter.scope)
        part = LiveAudit()
        try:
            with concurrency.hold(adapter.provider, Service.LISTING):
                listed = adapter.list_instances()
            part.listed.extend(listed)
            running = [i for i in listed if i.state.bills_compute]
            with concurrency.hold(adapter.provider, Service.METRICS):
                samples = adapter.fetch_utilisation(
                    running, start=start, end=end, period_minutes=period_minutes
                )
        except GpuplanError as exc:
            part.problems.append(f"{adapter.scope}: {exc.message}")
            return part
        for inst in running:
            subject = subject_of(inst, settings)
            got = samples.get(inst.instance_id)
            if subject is None or got is None:
                why = "no catalog price" if subject is None else "no GPU metrics (unknown)"
                part.skipped.append(f"{inst.instance_id}: {why}")
                continue
            billed = [t for t in starts if inst.started_at is None or t >= inst.started_at]
            usage = usage_of(got, billed, period_minutes)
            part.audits.append(audit_instance(subject, usage, catalog.offers, rule, catalog.gpus))
        return part

    for part in concurrency.map(one, list(enumerate(adapters))):
        out.audits.extend(part.audits)
        out.problems.extend(part.problems)
        out.skipped.extend(part.skipped)
        out.listed.extend(part.listed)
    out.audits.sort(key=lambda a: (-a.at_stake_per_month, a.subject.instance_id))
    return out


def period_key(now: datetime, days: int) -> str:
    """The audit period ``now`` falls in: aligned blocks of ``days`` from 1970-01-01."""
    epoch_days = (now.date() - datetime(1970, 1, 1).date()).days
    first = datetime(1970, 1, 1).date() + timedelta(days=epoch_days - epoch_days % days)
    return f"{first.isoformat()}/{days}d"


ALERT_CLAIM_MINUTES = 15
"""How long an alert's claim keeps other audit runs from sending it (then it expires)."""


def send_alerts(
    policy: Policy, audits: Sequence[InstanceAudit], ledger: Ledger,
    notifier: Notifier | None, now: datetime,
) -> list[AlertOutcome]:  # fmt: skip
    """One message per instance under the floor and period, claimed in the ledger before
    it is sent (:mod:`gpuplan.ledger.audit_alerts`): concurrent runs send it once."""
    settings = policy.audit
    period = period_key(now, settings.period_days)
    token = secrets.token_hex(6)
    until = now + timedelta(minutes=ALERT_CLAIM_MINUTES)
    outcomes: list[AlertOutcome] = []
    for a in audits:
        busy = 100 * a.split.share(a.split.busy)
        if busy >= settings.utilisation_floor_percent or a.split.paid < settings.min_usd:
            continue
        iid = a.subject.instance_id
        key = AlertKey(policy.name, iid, period)
        if notifier is None:
            sent = audit_alert_sent(ledger, policy.name, iid, period)
            outcomes.append(
                AlertOutcome(iid, AlertStatus.ALREADY_SENT, period)
                if sent
                else AlertOutcome(iid, AlertStatus.NO_WEBHOOK, "set notify.webhook_url")
            )
            continue
        holder = claim_audit_alert(ledger, key, token=token, at=now, until=until,
                                   busy_percent=busy, paid_usd=a.split.paid)  # fmt: skip
        if holder is not None:
            sent = holder.state is AlertClaim.SENT
            status = AlertStatus.ALREADY_SENT if sent else AlertStatus.CLAIMED
            outcomes.append(AlertOutcome(iid, status, f"{period}: {holder.detail}"))
            continue
        delivery = notifier.send(alert_text(policy.name, a, busy, period))
        if not delivery.ok:
            release_audit_alert(ledger, key, token=token)
            outcomes.append(
                AlertOutcome(iid, AlertStatus.FAILED, delivery.error or str(delivery.status))
            )
            continue
        confirm_audit_alert(ledger, key, token=token, at=now)
        outcomes.append(AlertOutcome(iid, AlertStatus.SENT, period))
    return outcomes


def alert_text(policy: str, a: InstanceAudit, busy: float, period: str) -> str:
    s = a.split
    lines = [
        f"[gpuplan {policy}] {a.subject.instance_id} ({a.subject.instance_type}) was busy "
        f"{busy:.0f}% of ${s.paid:,.2f} paid ({period}): waiting ${s.waiting:,.2f}, "
        f"idle ${s.idle:,.2f}.",
    ]
    lines += [f"- {v.action} (${v.usd_per_month:,.0f}/month): {v.evidence}" for v in a.advice]
    return "\n".join(lines)
