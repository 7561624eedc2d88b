"""Exempt dollars per hour and who holds them: one report for ``fleet``, ``audit`` and the TUI.

Each instance's exemption (:mod:`gpuplan.core.lifecycle.exemptions`: valid, open, expired, too long,
unreadable, void) and, across the running ones whose exemption holds, the dollars per
hour per holder (the policy's ``owners.tag``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal
from typing import Any

from gpuplan.core.lifecycle.exemptions import ExemptionState, holders, judge
from gpuplan.core.lifecycle.instances import GpuInstance
from gpuplan.core.policy import Policy


def exemption_record(inst: GpuInstance, policy: Policy, now: datetime) -> dict[str, Any] | None:
    """The instance's exemption (None: no exempt tag)."""
    found = judge(inst.labels, policy.idle.exempt_tag, now, policy.exemptions.max_days)
    if found.state is ExemptionState.NONE:
        return None
    return {
        "state": found.state.value,
        "exempts": found.state.exempts,
        "until": found.until,
        "void_after": found.void_after,
        "holder": inst.labels.get(policy.owners.tag, "").strip()[:128] or None,
        "reason": found.reason,
    }


def exempt_summary(
    instances: Iterable[GpuInstance], policy: Policy, now: datetime
) -> dict[str, Any]:
    """Exempt running instances' dollars per hour, in all and per holder."""
    rows = holders(
        instances, policy.idle.exempt_tag, policy.owners.tag, now, policy.exemptions.max_days
    )
    return {
        "usd_per_hour": sum((h.usd_per_hour for h in rows), start=Decimal(0)),
        "instances": sum(h.instances for h in rows),
        "by_holder": [
            {
                "holder": h.holder,
                "instances": h.instances,
                "usd_per_hour": h.usd_per_hour,
                "unpriced": h.unpriced,
            }
            for h in rows
        ],
    }


def exempt_line(summary: dict[str, Any]) -> str:
    """``Exempt: $110.08/h on 2 running instances (ml $55.04/h x1, (no owner) ...)``; ""
    when nothing is exempt."""
    if not summary["instances"]:
        return ""
    parts = ", ".join(
        f"{h['holder']} ${h['usd_per_hour']:,.2f}/h x{h['instances']}"
        + (f" ({h['unpriced']} unpriced)" if h["unpriced"] else "")
        for h in summary["by_holder"]
    )
    count = summary["instances"]
    noun = "running instance" if count == 1 else "running instances"
    return f"Exempt: ${summary['usd_per_hour']:,.2f}/h on {count} {noun} ({parts})."
