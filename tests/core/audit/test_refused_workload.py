"""An idle unit stop-idle refuses (a DaemonSet, a protected namespace, an opt-out, a
PodDisruptionBudget) is never advised stop-idle: the advice says why instead (issue 35)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from gpuplan.core.audit.advice import AdviceKind, audit_instance
from gpuplan.core.audit.split import AuditRule, Subject, Usage
from gpuplan.core.catalog.offers import Provider

REASON = "PodDisruptionBudget ml/nb-pdb allows no disruption"
SUBJECT = Subject("ml/Notebook/nb", Provider.AWS, "us-east-1", "g5.xlarge", Decimal("1.006"))
WEEK_IDLE = Usage(60, [[0.0]] * 168, [0.0] * 168, [1.0] * 168)


def test_an_idle_workload_stop_idle_may_act_on_is_advised_stop_idle() -> None:
    kinds = [a.kind for a in audit_instance(SUBJECT, WEEK_IDLE, [], AuditRule()).advice]
    assert AdviceKind.STOP_IDLE in kinds and AdviceKind.IDLE_REFUSED not in kinds


def test_a_refused_workload_gets_the_reason_not_stop_idle() -> None:
    refused = replace(SUBJECT, refused=REASON)
    free = audit_instance(SUBJECT, WEEK_IDLE, [], AuditRule())
    audited = audit_instance(refused, WEEK_IDLE, [], AuditRule())
    kinds = [a.kind for a in audited.advice]
    assert AdviceKind.STOP_IDLE not in kinds
    said = next(a for a in audited.advice if a.kind is AdviceKind.IDLE_REFUSED)
    assert REASON in said.action and "stop-idle refuses it" in said.action
    assert "stop it" not in said.action
    # the same dollars are at stake: only the advice changes
    stop = next(a for a in free.advice if a.kind is AdviceKind.STOP_IDLE)
    assert said.usd_per_month == stop.usd_per_month > 0
