"""Metric faults in the pure core: what is suspect, what is not, the hold, the breaker."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from gpuplan.core.lifecycle.faults import decide_with_faults, detect, fault_starts
from gpuplan.core.lifecycle.idle import IdleDecision, IdleRule, IdleVerdict
from gpuplan.core.lifecycle.instances import HostSamples, InstanceState
from gpuplan.core.lifecycle.plan import breaker_reason, counted

RULE = IdleRule()
NOW = datetime(2026, 12, 2, 12, 2, tzinfo=UTC)
STARTS = fault_starts(RULE, NOW)
Signal = Callable[[int], tuple[float, float, float]]
"""Period number (0 = oldest of the fault look-back) -> (utilisation, memory %, CPU %)."""


def host(signal: Signal) -> HostSamples:
    rows = [signal(n) for n in range(len(STARTS))]
    return HostSamples(
        utilisation={"0": {t: r[0] for t, r in zip(STARTS, rows, strict=True)}},
        memory={"0": {t: r[1] for t, r in zip(STARTS, rows, strict=True)}},
        cpu={t: r[2] for t, r in zip(STARTS, rows, strict=True)},
    )


def job(fault_at: int, *, memory: float = 40.0, quiet_cpu: float = 30.0) -> Signal:
    """Training (GPU 90%, CPU 30-36%); from ``fault_at`` the GPU reads exactly 0."""
    return lambda n: (0.0 if n >= fault_at else 90.0, memory, quiet_cpu + n % 4 * 2)


def decide(samples: HostSamples, suspect: object, now: datetime = NOW) -> IdleDecision:
    return decide_with_faults(
        samples,
        suspect,  # type: ignore[arg-type]
        started_at=None,
        labels={},
        state=InstanceState.RUNNING,
        rule=RULE,
        now=now,
        gpu_count=1,
    )


def test_the_look_back_is_twice_the_decisions() -> None:
    assert len(STARTS) * RULE.period_minutes == 360 == RULE.fault_lookback_minutes
    assert STARTS[-1] == datetime(2026, 12, 2, 11, 55, tzinfo=UTC)


def test_three_instances_stepping_to_zero_together_with_memory_held_are_suspect() -> None:
    fleet = {f"i-{n}": host(job(20)) for n in range(3)}
    fleet["i-busy"] = host(job(999))
    suspects = detect(fleet, RULE, NOW)
    assert sorted(suspects) == ["i-0", "i-1", "i-2"]
    (one,) = {s.evidence for s in suspects.values()}
    assert one == (
        "GPU utilisation stepped to exactly 0 at 07:40Z on 3 instances at once while a "
        "process holds GPU memory 40%"
    )
    assert suspects["i-0"].ends_at is None and len(suspects["i-0"].periods) == 52
    decision = decide(fleet["i-0"], suspects["i-0"])
    assert decision.verdict is IdleVerdict.UNKNOWN
    assert decision.reason == f"metrics suspect: {one}; while it lasts"


def test_two_instances_are_not_a_fleet_signature_and_a_hung_loop_stays_stoppable() -> None:
    fleet = {f"i-{n}": host(job(20)) for n in range(2)}
    assert detect(fleet, RULE, NOW) == {}
    decision = decide(fleet["i-0"], None)
    assert decision.verdict is IdleVerdict.IDLE  # 260 min quiet > the live-process window


def test_jobs_that_end_together_free_their_memory_and_are_not_suspect() -> None:
    fleet = {f"i-{n}": host(job(20, memory=0.0, quiet_cpu=0.5)) for n in range(5)}
    assert detect(fleet, RULE, NOW) == {}


def test_a_different_period_each_is_not_shared() -> None:
    fleet = {f"i-{n}": host(job(10 + 3 * n)) for n in range(5)}
    assert detect(fleet, RULE, NOW) == {}


def test_one_instance_whose_every_signal_drops_to_exactly_zero_is_a_dead_source() -> None:
    dead = host(lambda n: (0.0, 0.0, 0.0) if n >= 30 else (1.5, 0.2, 0.9 + n % 3 * 0.1))
    suspects = detect({"i-dead": dead}, RULE, NOW)
    assert "every signal dropped to exactly 0 at 08:30Z, CPU too" in suspects["i-dead"].evidence
    assert decide(dead, suspects["i-dead"]).verdict is IdleVerdict.UNKNOWN


@pytest.mark.parametrize(
    ("after", "verdict", "text"),
    [
        (10, IdleVerdict.UNKNOWN, "recovery hold until 12:50Z"),
        (59, IdleVerdict.UNKNOWN, "recovery hold until 12:50Z"),
        (61, IdleVerdict.BUSY, "suspect zeros not counted"),
    ],
)
def test_the_recovery_hold_then_the_suspect_periods_count_as_missing(
    after: int, verdict: IdleVerdict, text: str
) -> None:
    # Zeros from 08:00 to 11:50 on 4 jobs; after it they pause (GPU 2%, memory held).
    now = datetime(2026, 12, 2, 11, 50, tzinfo=UTC) + timedelta(minutes=after)
    starts = fault_starts(RULE, now)
    start, end = datetime(2026, 12, 2, 8, tzinfo=UTC), datetime(2026, 12, 2, 11, 50, tzinfo=UTC)

    def signal(n: int) -> tuple[float, float, float]:
        t = starts[n]
        gpu = 0.0 if start <= t < end else (2.0 if t >= end else 90.0)
        return gpu, 40.0, 3.0 + n % 3

    rows = [signal(n) for n in range(len(starts))]
    one = HostSamples(
        utilisation={"0": {t: r[0] for t, r in zip(starts, rows, strict=True)}},
        memory={"0": {t: r[1] for t, r in zip(starts, rows, strict=True)}},
        cpu={t: r[2] for t, r in zip(starts, rows, strict=True)},
    )
    suspects = detect({f"i-{n}": one for n in range(4)}, RULE, now)
    assert suspects["i-0"].ends_at == end
    decision = decide(one, suspects["i-0"], now)
    assert decision.verdict is verdict and text in decision.reason
    unmasked = decide(one, None, now)
    assert unmasked.verdict is IdleVerdict.IDLE  # what main did: 4 h of zeros count quiet


def test_the_breaker_is_inclusive_and_skips_instances_idle_on_every_signal() -> None:
    assert breaker_reason(8, 10, 80.0, 3) is not None  # 80% of 10: trips
    assert breaker_reason(7, 10, 80.0, 3) is None
    assert breaker_reason(2, 2, 80.0, 3) is None  # fewer than breaker_min_actions
    quiet = IdleDecision(IdleVerdict.IDLE, "", every_signal_quiet=True)
    alone = IdleDecision(IdleVerdict.IDLE, "")
    assert counted([quiet, quiet, quiet]) == 0
    assert counted([quiet, alone, alone]) == 2
