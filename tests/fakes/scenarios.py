"""The lifecycle scenario table, cloud-neutral: the same rows and verdicts as the AWS
table (tests/fakes/aws_scenarios.py), for the GCP, Azure and Prometheus wire fakes.

Each :class:`Case` says what one instance looks like (GPUs, labels, start, state, how
its GPUs report per period); each cloud's test builds it in its own fake and checks
that list -> utilisation -> the core's ``decide`` gives the same verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from gpuplan.core.lifecycle.idle import IdleRule, decide, period_starts
from gpuplan.core.lifecycle.instances import GpuInstance, HostSamples

NOW = datetime(2026, 12, 2, 10, 17, 30, tzinfo=UTC)
TEAM = {"team": "research"}
RULE = IdleRule(match_labels=TEAM)
PERIODS = period_starts(IdleRule(live_process_window_minutes=60), NOW)
"""The 60-min window: these worlds publish utilisation only (the utilisation-only rule)."""
WINDOW = (PERIODS[0], PERIODS[-1] + timedelta(minutes=RULE.period_minutes))
Pattern = Callable[[int, int], float | None]
"""(GPU index, period number) -> utilisation percent; None = nothing reported."""


def flat(value: float) -> Pattern:
    return lambda gpu, period: value


def _bursty(gpu: int, period: int) -> float:
    return 60.0 if period == 4 else 1.0


def _thin(gpu: int, period: int) -> float | None:
    return 0.0 if period < 6 else None


def _one_busy(gpu: int, period: int) -> float:
    return 70.0 if gpu == 3 and period == 6 else 1.0


def _one_silent(gpu: int, period: int) -> float | None:
    return None if gpu == 5 and period > 2 else 1.0


def _last_only(gpu: int, period: int) -> float | None:
    return 0.0 if period == len(PERIODS) - 1 else None


@dataclass(frozen=True)
class Case:
    name: str
    verdict: str
    pattern: Pattern | None = field(default=flat(1.0))
    gpus: int = 1
    labels: dict[str, str] = field(default_factory=lambda: dict(TEAM))
    started: datetime = NOW - timedelta(days=1)
    running: bool = True
    managed: bool = False
    spot: bool = False
    second_location: bool = False

    @property
    def stopped_by_apply(self) -> bool:
        return self.verdict == "idle"


CASES: tuple[Case, ...] = (
    Case("idle", "idle"),
    Case("busy", "busy", flat(85.0)),
    Case("bursty", "busy", _bursty),
    Case("no-agent", "unknown", None),
    Case("thin-data", "unknown", _thin),
    Case("just-launched", "grace", _last_only, started=NOW - timedelta(minutes=6)),
    Case("exempt", "exempt", flat(0.0), labels={**TEAM, "gpuplan-keep": "yes"}),
    Case(
        "snoozed", "exempt", flat(0.0), labels={**TEAM, "gpuplan-snooze-until": "20261202t140000z"}
    ),
    Case("out-of-scope", "out_of_scope", flat(0.0), labels={"team": "other"}),
    Case("group-member", "managed", flat(0.0), managed=True),
    Case("spot", "idle", flat(0.0), spot=True),
    Case("already-stopped", "out_of_scope", None, running=False),
    Case("8-gpu-one-busy", "busy", _one_busy, gpus=8),
    Case("8-gpu-one-silent", "unknown", _one_silent, gpus=8),
    Case("8-gpu-idle", "idle", flat(0.0), gpus=8),
    Case("other-location-idle", "idle", flat(2.0), second_location=True),
    Case("other-location-busy", "busy", flat(50.0), second_location=True),
)


def samples_of(case: Case) -> list[tuple[int, datetime, float]]:
    """(GPU, time inside the period, value) for every sample the case's agent sends."""
    out: list[tuple[int, datetime, float]] = []
    if case.pattern is None:
        return out
    for k, begin in enumerate(PERIODS):
        for gpu in range(case.gpus):
            value = case.pattern(gpu, k)
            if value is not None:
                out.append((gpu, begin + timedelta(seconds=90), value))
    return out


def verdict(instance: GpuInstance, samples: HostSamples | None) -> str:
    decision = decide(
        samples,
        started_at=instance.started_at,
        labels=instance.labels,
        state=instance.state,
        rule=RULE,
        now=NOW,
        gpu_count=instance.gpu_count,
        managed_by=instance.managed_by,
    )
    return decision.verdict.value


LOOKBACK = period_starts(RULE, NOW)
"""The 180-min live-process window: the signal cases publish this far back."""
LONG_WINDOW = (LOOKBACK[0], LOOKBACK[-1] + timedelta(minutes=RULE.period_minutes))


@dataclass(frozen=True)
class SignalCase:
    """One instance with GPU memory and CPU as well as utilisation (over ``LOOKBACK``)."""

    name: str
    verdict: str
    reason: str
    """A fragment the verdict's reason must contain."""
    memory_percent: float
    cpu_percent: float
    busy_period: int | None = None
    """The one period (index into LOOKBACK) at 95% utilisation; else 0% throughout."""

    def utilisation(self, period: int) -> float:
        return 95.0 if period == self.busy_period else 0.0


SIGNAL_CASES = (
    SignalCase("abandoned", "idle", "no process (memory 0%), CPU 1%", 0.4, 1.0),
    SignalCase("hung-loop", "idle", "live-process window", 70.0, 12.0),
    SignalCase("model-loaded", "busy", "a process holds GPU memory 60%", 60.0, 2.0, 12),
    SignalCase("cpu-phase", "busy", "(CPU phase)", 0.4, 85.0, 12),
)


def signal_reason(instance: GpuInstance, samples: HostSamples | None) -> tuple[str, str]:
    """(verdict, reason) for a signal case."""
    decision = decide(
        samples,
        started_at=instance.started_at,
        labels=instance.labels,
        state=instance.state,
        rule=RULE,
        now=NOW,
        gpu_count=instance.gpu_count,
        managed_by=instance.managed_by,
    )
    return decision.verdict.value, decision.reason
