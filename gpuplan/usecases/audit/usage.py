"""``gpuplan audit``: read usage, price it against the catalog, diagnose, group.

The offline path reads trace folders (format v2, optional ``gpuN_utilisation``
columns); each trace is aggregated to ``period_minutes`` the way a metrics source
returns aggregates (mean utilisation per GPU, max GPU memory, mean CPU).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from gpuplan.core.audit.advice import InstanceAudit, audit_instance
from gpuplan.core.audit.grouping import GroupBy
from gpuplan.core.audit.split import AuditRule, Subject, Usage
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.lifecycle.simulation.traces import Trace
from gpuplan.usecases.clouds.entries import trace_prices


@dataclass(frozen=True)
class GroupAudit:
    name: str
    instances: int
    paid: Decimal
    busy: Decimal
    waiting: Decimal
    idle: Decimal
    unknown: Decimal
    oversized: Decimal
    at_stake_per_month: Decimal


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def usage_of(trace: Trace, period_minutes: int) -> Usage:
    gpus = trace.gpus or (trace.utilisation,)
    memory = trace.memory or (None,) * trace.minutes
    cpu = trace.cpu or (None,) * trace.minutes
    per_gpu: list[tuple[float | None, ...]] = []
    mem: list[float | None] = []
    cpus: list[float | None] = []
    for start in range(0, trace.minutes, period_minutes):
        end = start + period_minutes
        per_gpu.append(tuple(_mean(g[start:end]) for g in gpus))
        held = [m for m in memory[start:end] if m is not None]
        mem.append(max(held) if held else None)
        cpus.append(_mean(cpu[start:end]))
    return Usage(period_minutes, per_gpu, mem, cpus)


def subject_of(trace: Trace, catalog: Catalog) -> Subject:
    count = len(trace.gpus) if trace.gpus else _gpu_count(trace.instance_type, catalog)
    at = trace_prices()
    return Subject(
        instance_id=trace.instance_id, provider=at.provider,
        region=at.region, instance_type=trace.instance_type,
        hourly_usd=trace.hourly_usd,
        group=trace.trace_class, gpu_count=count,
    )  # fmt: skip


def _gpu_count(instance_type: str, catalog: Catalog) -> int:
    for o in catalog.offers:
        if o.instance_type == instance_type:
            return max(1, int(o.gpu_count))
    return 1


def audit_traces(
    traces: Sequence[Trace], catalog: Catalog, rule: AuditRule, period_minutes: int = 5
) -> list[InstanceAudit]:
    offers = catalog.offers
    out = [
        audit_instance(
            subject_of(t, catalog), usage_of(t, period_minutes), offers, rule, catalog.gpus
        )
        for t in traces
    ]
    return sorted(out, key=lambda a: (-a.at_stake_per_month, a.subject.instance_id))


def load_trace_folder(directory: Path, catalog: Catalog) -> list[Trace]:
    from gpuplan.loaders.traces import read_traces
    from gpuplan.usecases.lifecycle.simulate import catalog_prices

    return read_traces(directory, price_of=catalog_prices(catalog))


def groups(audits: Sequence[InstanceAudit], by: GroupBy) -> list[GroupAudit]:
    """Totals per group (:mod:`gpuplan.core.audit.grouping`: the trace class, the account or a
    label's value), dollars at stake descending, then name."""
    buckets: dict[str, list[InstanceAudit]] = {}
    for a in audits:
        buckets.setdefault(group_name(a.subject, by), []).append(a)
    out = [_total(name, items) for name, items in buckets.items()]
    return sorted(out, key=lambda g: (-g.at_stake_per_month, g.name))


def _total(name: str, items: Sequence[InstanceAudit]) -> GroupAudit:
    def total(values: list[Decimal]) -> Decimal:
        return sum(values, Decimal(0))

    return GroupAudit(
        name=name,
        instances=len(items),
        paid=total([i.split.paid for i in items]),
        busy=total([i.split.busy for i in items]),
        waiting=total([i.split.waiting for i in items]),
        idle=total([i.split.idle for i in items]),
        unknown=total([i.split.unknown for i in items]),
        oversized=total([i.oversized for i in items]),
        at_stake_per_month=total([i.at_stake_per_month for i in items]),
    )


def group_name(subject: Subject, by: GroupBy) -> str:
    return by.name(account=subject.account, labels=subject.labels, trace_class=subject.group)


def record(a: InstanceAudit) -> dict[str, Any]:
    s, r = a.split, a.resize
    return {
        "instance_id": a.subject.instance_id,
        "instance_type": a.subject.instance_type,
        "group": a.subject.group,
        "hours": float(s.hours),
        "paid_usd": _c(s.paid),
        "busy_usd": _c(s.busy),
        "waiting_usd": _c(s.waiting),
        "idle_usd": _c(s.idle),
        "unknown_usd": _c(s.unknown),
        "oversized_usd": _c(a.oversized),
        "at_stake_usd_per_month": a.at_stake_per_month,
        "right_size": None if r is None else {
            "instance_type": r.offer.instance_type, "hourly_usd": r.hourly_usd,
            "price_source": r.source, "as_of": r.as_of.isoformat(),
            "needs": {"gpus": r.need.gpus, "gpu_memory_gb": round(r.need.gpu_memory_gb, 1),
                      "vcpus": r.need.vcpus},
        },
        "advice": [
            {"kind": v.kind.value, "action": v.action, "evidence": v.evidence,
             "usd_per_month": v.usd_per_month}
            for v in a.advice
        ],
    }  # fmt: skip


def _c(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.01"))


def group_record(g: GroupAudit) -> dict[str, Any]:
    """One group for ``--json``: money to the cent, like the instance records."""
    return {k: _c(v) if isinstance(v, Decimal) else v for k, v in vars(g).items()}
