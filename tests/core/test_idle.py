"""The pure idle decision: a table of cases plus a hypothesis property."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan.core.lifecycle.idle import (
    IdleRule,
    IdleVerdict,
    decide,
    format_tag_time,
    parse_tag_time,
    period_starts,
    window_bounds,
)
from gpuplan.core.lifecycle.instances import GpuSeries, HostSamples, InstanceState

NOW = datetime(2026, 12, 2, 10, 17, 30, tzinfo=UTC)
RULE = IdleRule(
    threshold_percent=5,
    window_minutes=60,
    period_minutes=5,
    min_coverage_percent=80,
    live_process_window_minutes=60,
)
PERIODS = period_starts(RULE, NOW)
LONG_AGO = NOW - timedelta(days=1)


def flat(value: float, gpus: int = 1) -> dict[str, dict[datetime, float]]:
    return {str(g): dict.fromkeys(PERIODS, value) for g in range(gpus)}


def host(utilisation: GpuSeries | None) -> HostSamples | None:
    """Utilisation alone as a sample set (None stays None: no series at all)."""
    return None if utilisation is None else HostSamples(utilisation=utilisation)


def verdict(samples: GpuSeries | None, **kw: object) -> IdleVerdict:
    args: dict[str, object] = {
        "started_at": LONG_AGO,
        "labels": {},
        "state": InstanceState.RUNNING,
        "rule": RULE,
        "now": NOW,
        "gpu_count": 1,
    }
    args.update(kw)
    return decide(host(samples), **args).verdict  # type: ignore[arg-type]


def test_window_is_aligned_and_excludes_the_open_period() -> None:
    start, end = window_bounds(RULE, NOW)
    assert end == datetime(2026, 12, 2, 10, 15, tzinfo=UTC)
    assert start == end - timedelta(minutes=60)
    assert len(PERIODS) == 12 and PERIODS[0] == start


def test_tag_time_round_trip() -> None:
    text = format_tag_time(datetime(2026, 12, 2, 10, 15, tzinfo=UTC))
    assert text == "20261202t101500z"
    assert parse_tag_time(text) == datetime(2026, 12, 2, 10, 15, tzinfo=UTC)
    assert parse_tag_time("tomorrow") is None


def test_reason_code() -> None:
    assert RULE.code == "idle-60m-lt5pct"
    assert IdleRule(threshold_percent=2.5, window_minutes=90).code == "idle-90m-lt2p5pct"


def eight_with(gpu: int, value: float | None) -> dict[str, dict[datetime, float]]:
    s = flat(1.0, gpus=8)
    if value is None:
        s[str(gpu)] = {t: 1.0 for t in PERIODS[:3]}
    else:
        s[str(gpu)][PERIODS[6]] = value
    return s


bursty = flat(0.0)
bursty["0"][PERIODS[4]] = 60.0
thin = {"0": {t: 0.0 for t in PERIODS[:6]}}


@pytest.mark.parametrize(
    ("samples", "kw", "expected"),
    [
        (flat(0.0), {}, IdleVerdict.IDLE),
        (flat(4.99), {}, IdleVerdict.IDLE),
        (flat(5.0), {}, IdleVerdict.BUSY),
        (flat(90.0), {}, IdleVerdict.BUSY),
        (bursty, {}, IdleVerdict.BUSY),
        (None, {}, IdleVerdict.UNKNOWN),
        ({}, {}, IdleVerdict.UNKNOWN),
        (thin, {}, IdleVerdict.UNKNOWN),
        (flat(0.0), {"started_at": NOW - timedelta(minutes=5)}, IdleVerdict.GRACE),
        (flat(0.0), {"state": InstanceState.PENDING}, IdleVerdict.GRACE),
        (flat(0.0), {"started_at": None}, IdleVerdict.IDLE),
        (flat(0.0), {"labels": {"gpuplan-keep": ""}}, IdleVerdict.EXEMPT),
        (
            flat(0.0),
            {"labels": {"gpuplan-snooze-until": "20261202t120000z"}},
            IdleVerdict.EXEMPT,
        ),
        (flat(0.0), {"labels": {"gpuplan-snooze-until": "20261202t100000z"}}, IdleVerdict.IDLE),
        (flat(0.0), {"labels": {"gpuplan-snooze-until": "soon"}}, IdleVerdict.EXEMPT),
        (flat(0.0), {"managed_by": "Auto Scaling group asg-1"}, IdleVerdict.MANAGED),
        (flat(0.0), {"state": InstanceState.STOPPED}, IdleVerdict.OUT_OF_SCOPE),
        (
            flat(0.0),
            {"rule": IdleRule(match_labels={"team": "research"})},
            IdleVerdict.OUT_OF_SCOPE,
        ),
        (
            flat(0.0),
            {"rule": IdleRule(match_labels={"team": "research"}), "labels": {"team": "research"}},
            IdleVerdict.IDLE,
        ),
        (flat(0.0, gpus=8), {"gpu_count": 8}, IdleVerdict.IDLE),
        (eight_with(3, 70.0), {"gpu_count": 8}, IdleVerdict.BUSY),
        (eight_with(3, None), {"gpu_count": 8}, IdleVerdict.UNKNOWN),
        (flat(0.0, gpus=7), {"gpu_count": 8}, IdleVerdict.UNKNOWN),
    ],
    ids=[
        "idle",
        "just-below",
        "at-threshold",
        "busy",
        "bursty",
        "no-agent",
        "no-series",
        "thin",
        "just-launched",
        "pending",
        "no-start-time",
        "exempt",
        "snoozed",
        "snooze-expired",
        "snooze-unreadable",
        "managed",
        "stopped",
        "out-of-scope",
        "in-scope",
        "8-gpu-idle",
        "8-gpu-one-busy",
        "8-gpu-one-silent",
        "7-of-8-report",
    ],
)
def test_verdicts(samples: GpuSeries | None, kw: dict[str, object], expected: IdleVerdict) -> None:
    assert verdict(samples, **kw) is expected


def test_figures_and_reasons() -> None:
    d = decide(
        host(bursty),
        started_at=LONG_AGO,
        labels={},
        state=InstanceState.RUNNING,
        rule=RULE,
        now=NOW,
        gpu_count=1,
    )
    assert d.max_percent == 60.0
    assert d.coverage_percent == 100.0
    assert d.idle_minutes == 35  # periods 5..11 after the burst
    assert "60%" in d.reason
    none = decide(
        None, started_at=LONG_AGO, labels={}, state=InstanceState.RUNNING, rule=RULE, now=NOW
    )
    assert "install or fix the GPU metrics agent" in none.reason
    silent = decide(
        host(flat(0.0, gpus=7)),
        started_at=LONG_AGO,
        labels={},
        state=InstanceState.RUNNING,
        rule=RULE,
        now=NOW,
        gpu_count=8,
    )
    assert "only 7 of 8 GPUs report" in silent.reason
    one_silent = decide(
        host(eight_with(5, None)),
        started_at=LONG_AGO,
        labels={},
        state=InstanceState.RUNNING,
        rule=RULE,
        now=NOW,
        gpu_count=8,
    )
    assert "GPU 5 missing in 9 of 12 periods" in one_silent.reason


values = st.floats(min_value=0, max_value=100, allow_nan=False)


@st.composite
def series(draw: st.DrawFn) -> tuple[dict[str, dict[datetime, float]], int]:
    gpus = draw(st.integers(min_value=1, max_value=4))
    out: dict[str, dict[datetime, float]] = {}
    for g in range(draw(st.integers(min_value=0, max_value=gpus))):
        present = draw(st.lists(st.booleans(), min_size=len(PERIODS), max_size=len(PERIODS)))
        out[str(g)] = {t: draw(values) for t, ok in zip(PERIODS, present, strict=True) if ok}
    return out, gpus


@settings(max_examples=300, deadline=None)
@given(
    data=series(),
    threshold=st.floats(min_value=0.5, max_value=100),
    min_coverage=st.floats(min_value=1, max_value=100),
)
def test_never_idle_when_busy_or_thin(
    data: tuple[dict[str, dict[datetime, float]], int], threshold: float, min_coverage: float
) -> None:
    samples, gpus = data
    rule = IdleRule(
        threshold_percent=threshold,
        min_coverage_percent=min_coverage,
        live_process_window_minutes=60,
    )
    d = decide(
        host(samples),
        started_at=LONG_AGO,
        labels={},
        state=InstanceState.RUNNING,
        rule=rule,
        now=NOW,
        gpu_count=gpus,
    )
    busiest = [max((s[t] for s in samples.values() if t in s), default=None) for t in PERIODS]
    covered = [len(samples) == gpus and all(t in s for s in samples.values()) for t in PERIODS]
    coverage = 100.0 * sum(covered) / len(PERIODS)
    busy = any(b is not None and b >= threshold for b in busiest)
    if busy or coverage < min_coverage:
        assert d.verdict is not IdleVerdict.IDLE
    else:
        assert d.verdict is IdleVerdict.IDLE
    assert d.verdict in (IdleVerdict.IDLE, IdleVerdict.BUSY, IdleVerdict.UNKNOWN)
