"""A well-used instance gets no advice, stop-idle included (issue 25, item 4)."""

from __future__ import annotations

from decimal import Decimal

from gpuplan.core.audit.advice import AdviceKind, audit_instance
from gpuplan.core.audit.split import AuditRule, Subject, Usage
from gpuplan.core.catalog.offers import Provider

SUBJECT = Subject("i-1", Provider.AWS, "us-east-1", "g5.xlarge", Decimal("1.006"))
DAY = 24  # hourly periods


def usage(*parts: tuple[int, float | None, float | None, float | None]) -> Usage:
    gpus: list[list[float | None]] = []
    memory: list[float | None] = []
    cpu: list[float | None] = []
    for hours, util, mem, load in parts:
        gpus += [[util]] * hours
        memory += [mem] * hours
        cpu += [load] * hours
    return Usage(60, gpus, memory, cpu)


def kinds(u: Usage) -> set[AdviceKind]:
    return {a.kind for a in audit_instance(SUBJECT, u, [], AuditRule()).advice}


def test_six_days_of_training_then_idle_gets_no_advice() -> None:
    # Busy 81% of its cost: main advised "stop it with stop-idle" all the same.
    trained = usage((6 * DAY, 95.0, 80.0, 30.0), (int(1.4 * DAY), 0.0, 0.0, 1.0))
    audited = audit_instance(SUBJECT, trained, [], AuditRule())
    assert audited.split.busy_share >= 0.6
    assert kinds(trained) == set()


def test_a_job_that_finished_early_is_judged_on_its_own_days() -> None:
    # Three days at 80%, idle 18 h, then no reports: the instance was gone. Busy 64% of
    # its own 90 hours; main counted the absent days too (34%) and advised stop-idle.
    finished = usage((3 * DAY, 80.0, 70.0, 30.0), (18, 0.0, 0.0, 1.0), (3 * DAY, None, None, None))
    assert kinds(finished) == set()


def test_an_instance_idle_most_of_the_week_still_gets_stop_idle() -> None:
    mostly_idle = usage((DAY, 95.0, 80.0, 30.0), (6 * DAY, 0.0, 0.0, 1.0))
    assert AdviceKind.STOP_IDLE in kinds(mostly_idle)
