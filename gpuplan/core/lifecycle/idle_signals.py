"""The signal part of the idle decision: GPU utilisation, GPU memory and CPU per period.

Pure. :func:`judge` gets the period grid of one running instance (the window plus, when
longer, the live-process window) and returns the verdict with the signals that decided it:

- Utilisation first, as always: any period in the window with the busiest GPU at or above
  the threshold is ``busy``; no utilisation is ``unknown``; thin coverage is ``unknown``.
- GPUs quiet for the whole window, no process holding GPU memory (every GPU below the
  memory floor) and a quiet CPU: ``idle`` after ``window_minutes``.
- GPUs quiet but a live process (GPU memory at or above the floor) or a busy CPU (a CPU
  phase: preprocessing, evaluation on CPU, a loader): ``busy`` until the GPUs have been
  quiet for the whole ``live_process_window_minutes``; then ``idle`` all the same, so a
  hung loop or a notebook kernel left overnight is stopped in the end.
- No memory and no CPU data: the utilisation-only rule (the window), and the reason says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from gpuplan.core.lifecycle.instances import HostSamples


@dataclass(frozen=True)
class Grid:
    """Per period start (oldest first): busiest GPU, whether every GPU reported, fullest
    GPU memory (percent of total) and instance CPU; None where nothing was reported."""

    starts: Sequence[datetime]
    busiest: Sequence[float | None]
    covered: Sequence[bool]
    memory: Sequence[float | None]
    cpu: Sequence[float | None]
    gpus_reporting: int
    gpus_expected: int

    def tail(self, count: int) -> Grid:
        n = len(self.starts) - count
        return Grid(
            self.starts[n:],
            self.busiest[n:],
            self.covered[n:],
            self.memory[n:],
            self.cpu[n:],
            self.gpus_reporting,
            self.gpus_expected,
        )

    @property
    def coverage(self) -> float:
        return 100.0 * sum(self.covered) / len(self.starts) if self.starts else 0.0


def build_grid(samples: HostSamples, starts: Sequence[datetime], gpu_count: float) -> Grid:
    # Each series is read at the period starts (a lookup per slot, no index of the starts
    # to build): this runs once per instance per survey, 50,000 times for a large org, and
    # twice per instance at every tick of the simulator.
    busiest, counts, reporting = _fold(samples.utilisation.values(), starts, count=True)
    expected = max(math.ceil(gpu_count), reporting)
    memory, _, _ = _fold(samples.memory.values(), starts, count=False)
    return Grid(
        starts=tuple(starts),
        busiest=tuple(busiest),
        # every GPU reported (a GPU that never reported in the grid does not count)
        covered=tuple([c == expected for c in counts]),
        memory=tuple(memory),
        cpu=tuple(map(samples.cpu.get, starts)),
        gpus_reporting=reporting,
        gpus_expected=expected,
    )


def _fold(
    series: Iterable[Mapping[datetime, float]],
    starts: Sequence[datetime],
    *,
    count: bool,
) -> tuple[list[float | None], list[int], int]:
    """Per period: the max over the series (first wins on ties, as ``max``), how many
    series have a value there, and how many series have any value in the grid."""
    peak: list[float | None] = [None] * len(starts)
    counts = [0] * len(starts)
    reporting = 0
    for values in series:
        column = list(map(values.get, starts))
        if column.count(None) == len(column):  # nothing in the grid
            continue
        reporting += 1
        if reporting == 1:  # the first series: nothing to compare with yet
            peak = column
            if count:
                counts = [0 if v is None else 1 for v in column]
            continue
        for i, v in enumerate(column):
            if v is None:
                continue
            if count:
                counts[i] += 1
            current = peak[i]
            if current is None or v > current:
                peak[i] = v
    return peak, counts, reporting


@dataclass(frozen=True)
class IdleRule:
    """The idle thresholds: the one type ``decide``, :func:`judge`, the audit split, the
    fault detection and the simulator read. The policy's ``idle:`` section
    (:class:`~gpuplan.core.policy.models.IdleSettings`) takes its defaults from here and
    produces it (``IdleSettings.rule``)."""

    threshold_percent: float = 5.0
    """GPU utilisation; per period, the busiest GPU of the instance counts."""
    window_minutes: int = 60
    period_minutes: int = 5
    min_coverage_percent: float = 80.0
    grace_minutes: int = 20
    exempt_tag: str = "gpuplan-keep"
    match_labels: Mapping[str, str] = field(default_factory=dict)
    live_process_window_minutes: int = 180
    """GPUs quiet this long count as idle even while a process holds GPU memory or the
    CPU is busy (a hung loop, a notebook kernel left overnight)."""
    gpu_memory_floor_percent: float = 1.0
    """GPU memory in use at or above this (percent of total) means a live process."""
    cpu_busy_percent: float = 10.0
    """Instance CPU at or above this means work is going on (a CPU phase)."""
    exempt_max_days: int | None = None
    """The longest exemption allowed (``exemptions.max_days``); None: a value that is no
    date keeps exempting for good (:mod:`gpuplan.core.lifecycle.exemptions`)."""
    fault_hold_minutes: int = 60
    """After suspect zeros end (:mod:`gpuplan.core.lifecycle.faults`), the verdict stays unknown
    this long (the recovery hold)."""

    @property
    def lookback_minutes(self) -> int:
        """How far back the decision reads: the longer of the two windows."""
        return max(self.window_minutes, self.live_process_window_minutes)

    @property
    def fault_lookback_minutes(self) -> int:
        """How far back the fault detection reads: twice the decision's lookback (or the
        lookback plus the hold when longer), so the step into an outage stays in view for
        as long again as the decision reads, and the step out of it through the hold."""
        return self.lookback_minutes + max(self.lookback_minutes, self.fault_hold_minutes)

    @property
    def code(self) -> str:
        """Short reason code for tags: ``idle-60m-lt5pct``."""
        threshold = f"{self.threshold_percent:g}".replace(".", "p")
        return f"idle-{self.window_minutes}m-lt{threshold}pct"


class PeriodClass(StrEnum):
    """What one period of one instance was: the one classification that ``decide``, the
    audit split, ``waste``, the TUI and the simulator share."""

    BUSY = "busy"
    """The busiest GPU at or above the threshold."""
    LIVE_PROCESS = "live process"
    """GPUs quiet, but a process holds GPU memory (a paused job, a notebook kernel)."""
    CPU_PHASE = "CPU phase"
    """GPUs quiet and no process holding memory, but the CPU works (preprocessing...)."""
    IDLE = "idle"
    """GPUs quiet, no process, quiet CPU, or quiet GPUs with no memory or CPU data (the
    utilisation-only rule, as ``decide`` applies it)."""
    UNKNOWN = "unknown"
    """No GPU reported: missing metrics are never idle."""

    @property
    def running(self) -> bool:
        """Something ran (busy, or a live process or CPU phase while the GPUs wait)."""
        return self in (PeriodClass.BUSY, PeriodClass.LIVE_PROCESS, PeriodClass.CPU_PHASE)


def holds_memory(memory: float | None, t: IdleRule) -> bool:
    return memory is not None and memory >= t.gpu_memory_floor_percent


def cpu_working(cpu: float | None, t: IdleRule) -> bool:
    return cpu is not None and cpu >= t.cpu_busy_percent


def classify_period(
    busiest: float | None, memory: float | None, cpu: float | None, t: IdleRule
) -> PeriodClass:
    """One period: the busiest GPU, the fullest GPU's memory (percent) and the CPU."""
    if busiest is None:
        return PeriodClass.UNKNOWN
    if busiest >= t.threshold_percent:
        return PeriodClass.BUSY
    if holds_memory(memory, t):
        return PeriodClass.LIVE_PROCESS
    if cpu_working(cpu, t):
        return PeriodClass.CPU_PHASE
    return PeriodClass.IDLE


@dataclass(frozen=True)
class Judgement:
    idle: bool
    reason: str
    memory_percent: float | None
    cpu_percent: float | None
    quiet_minutes: int
    needed_minutes: int
    """The window that decided: ``window_minutes`` or ``live_process_window_minutes``."""
    every_signal_quiet: bool = False
    """Idle with GPU memory and CPU both reported and quiet (not utilisation alone)."""


def judge(window: Grid, full: Grid, t: IdleRule) -> Judgement:
    """``window``: the last ``window_minutes`` (already quiet and covered); ``full``: the
    whole grid, as long as the live-process window when that is longer."""
    memory = _max(window.memory)
    cpu = _max(window.cpu)
    quiet = quiet_minutes(full, t)
    held = holds_memory(memory, t)
    cpu_busy = cpu_working(cpu, t)
    busiest = _max(window.busiest) or 0.0
    # The window is already quiet and covered: the shared period class of its maxima
    # decides between idle and "something still runs" (live process / CPU phase).
    if classify_period(busiest, memory, cpu, t) is PeriodClass.IDLE:
        reason = _quiet_reason(busiest, memory, cpu, min(quiet, t.window_minutes), t)
        every = memory is not None and cpu is not None
        return Judgement(True, reason, memory, cpu, quiet, t.window_minutes, every)
    signs = _signs(memory, cpu, held, cpu_busy)
    live = full.tail(min(len(full.starts), _periods(t.live_process_window_minutes, t)))
    long_enough = len(live.starts) * t.period_minutes >= t.live_process_window_minutes
    waited = long_enough and quiet >= t.live_process_window_minutes
    if waited and live.coverage >= t.min_coverage_percent:
        reason = (
            f"GPUs below {t.threshold_percent:g}% for {t.live_process_window_minutes} min "
            f"(live-process window) though {signs}"
        )
        return Judgement(True, reason, memory, cpu, quiet, t.live_process_window_minutes)
    phase = " (CPU phase)" if cpu_busy else ""
    reason = (
        f"{signs}{phase}: GPUs below {t.threshold_percent:g}% for {quiet} of "
        f"{t.live_process_window_minutes} min (live-process window)"
    )
    return Judgement(False, reason, memory, cpu, quiet, t.live_process_window_minutes)


def _quiet_reason(
    busiest: float, memory: float | None, cpu: float | None, minutes: int, t: IdleRule
) -> str:
    parts = [f"GPUs {busiest:g}%"]
    parts.append("no GPU memory data" if memory is None else f"no process (memory {memory:.0f}%)")
    parts.append("no CPU data" if cpu is None else f"CPU {cpu:.0f}%")
    seen = f"{minutes} min" if minutes >= t.window_minutes else f"{minutes} min observed"
    reason = f"{', '.join(parts)} for {seen}"
    if memory is None and cpu is None:
        reason += ": utilisation only"
    return reason


def _signs(memory: float | None, cpu: float | None, held: bool, cpu_busy: bool) -> str:
    mem = "no GPU memory data" if memory is None else f"GPU memory {memory:.0f}%"
    if held:
        mem = f"a process holds GPU memory {memory:.0f}%"
    cpu_text = "no CPU data" if cpu is None else f"CPU {cpu:.0f}%"
    if cpu_busy:
        cpu_text = f"CPU busy {cpu:.0f}%"
    return f"{mem}, {cpu_text}"


def quiet_minutes(grid: Grid, t: IdleRule) -> int:
    """Trailing minutes with no period at or above the threshold, from the first period
    that reported (gaps inside do not break it; no data before it does not count)."""
    reported = 0
    for count, value in enumerate(reversed(grid.busiest), start=1):
        if value is not None and value >= t.threshold_percent:
            break
        if value is not None:
            reported = count
    return reported * t.period_minutes


def _periods(minutes: int, t: IdleRule) -> int:
    return max(1, math.ceil(minutes / t.period_minutes))


def _max(values: Sequence[float | None]) -> float | None:
    return max((v for v in values if v is not None), default=None)
