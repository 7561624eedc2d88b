"""One meaning of idle: the audit's period class and ``decide`` agree (issue 25, item 3).

On main the audit used its own defaults (GPU memory floor 2%) and called quiet GPUs with no
memory or CPU data "unknown", while ``decide`` used the policy (1%) and the
utilisation-only rule: GPU 0%, memory 1.5%, CPU 0% was idle to the audit (which advised
stop-idle) and busy to ``decide``; with no memory or CPU data they flipped the other way.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan.core.audit.split import AuditRule, Bucket, period_class
from gpuplan.core.lifecycle.idle import IdleRule, IdleVerdict, decide, period_starts
from gpuplan.core.lifecycle.instances import HostSamples, InstanceState
from gpuplan.core.policy.models import IdleSettings

NOW = datetime(2026, 12, 2, 10, 17, 30, tzinfo=UTC)
AGREE = {Bucket.IDLE: IdleVerdict.IDLE, Bucket.BUSY: IdleVerdict.BUSY}


def decided(util: float, memory: float | None, cpu: float | None, rule: IdleRule) -> IdleVerdict:
    # One hour of data (shorter than the live-process window): a live process stays busy.
    starts = [t for t in period_starts(rule, NOW) if t >= NOW - timedelta(minutes=65)]
    samples = HostSamples(
        utilisation={"0": dict.fromkeys(starts, util)},
        memory={} if memory is None else {"0": dict.fromkeys(starts, memory)},
        cpu={} if cpu is None else dict.fromkeys(starts, cpu),
    )
    return decide(samples, started_at=None, labels={}, state=InstanceState.RUNNING,
                  rule=rule, now=NOW, gpu_count=1).verdict  # fmt: skip


@pytest.mark.parametrize(
    ("util", "memory", "cpu"),
    [
        (0.0, 1.5, 0.0),  # a process holds 1.5% of GPU memory: a live process
        (0.0, None, None),  # utilisation only: idle, as decide says
        (0.0, 0.2, 1.0),  # nothing runs
        (0.0, 0.2, 40.0),  # a CPU phase
        (3.0, 50.0, 5.0),  # a paused job holding its memory
        (60.0, 50.0, 30.0),  # working
    ],
)
def test_the_audit_and_decide_agree_on_a_period(
    util: float, memory: float | None, cpu: float | None
) -> None:
    rule = IdleRule()
    bucket = period_class(AuditRule(), [util], memory, cpu)
    assert AGREE[bucket] is decided(util, memory, cpu, rule)


def test_the_audit_without_a_policy_uses_the_policy_schema_defaults() -> None:
    schema, audit = IdleSettings(), AuditRule()
    assert audit.quiet_percent == schema.threshold_percent
    assert audit.memory_floor_percent == schema.gpu_memory_floor_percent
    assert audit.cpu_quiet_percent == schema.cpu_busy_percent


def test_the_audit_reads_the_policy_thresholds() -> None:
    strict = IdleRule(gpu_memory_floor_percent=5.0, threshold_percent=2.0)
    rule = AuditRule.from_idle(strict)
    # 3% memory: a process under the default floor, nothing under this policy's 5%
    assert period_class(AuditRule(), [0.0], 3.0, 0.0) is Bucket.BUSY
    assert period_class(rule, [0.0], 3.0, 0.0) is Bucket.IDLE
    assert decided(0.0, 3.0, 0.0, strict) is IdleVerdict.IDLE
    assert period_class(rule, [3.0], 0.0, 0.0) is Bucket.BUSY  # 3% >= the 2% threshold


_PERCENT = st.floats(min_value=0.0, max_value=100.0, allow_nan=False)


@settings(max_examples=150, deadline=None)
@given(
    util=st.floats(min_value=0.0, max_value=4.9, allow_nan=False),
    memory=st.none() | _PERCENT,
    cpu=st.none() | _PERCENT,
)
def test_any_quiet_period_is_classed_alike(
    util: float, memory: float | None, cpu: float | None
) -> None:
    """Any quiet hour, whatever its memory and CPU: the audit's class and decide agree."""
    rule = IdleRule()
    bucket = period_class(AuditRule(), [util], memory, cpu)
    assert AGREE[bucket] is decided(util, memory, cpu, rule)
