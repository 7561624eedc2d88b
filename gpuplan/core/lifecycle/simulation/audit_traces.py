"""A seeded fleet for the utilisation audit, with the truth the audit must find.

Per-GPU traces (format v2 plus ``gpuN_utilisation``) of five workload classes; the
generator labels every minute running or idle and knows each GPU's utilisation, so the
true dollar split (busy = cost x mean GPU utilisation while running, waiting = the rest
of running time, idle = nothing running) and the expected advice are known up front:

- ``input-bound`` (p4d.24xlarge): all 8 GPUs at 25-45% while the CPU is at 88-100%.
- ``one-of-eight`` (p4d.24xlarge): GPU 0 at 85-100%, the other seven at 0%; a few cores.
- ``notebook`` (g6e.xlarge, L40S 48 GB): day sessions of bursts and pauses with the
  kernel holding 15-35% of GPU memory, nights shut down.
- ``forgotten`` (g5.12xlarge): a job of 2-6 h, then nothing running at all.
- ``well-used`` (p5.48xlarge): all GPUs at 88-100%, memory 70-95%.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from gpuplan.core.lifecycle.simulation.traces import Kind, Segment, Trace

AUDIT_CLASSES: dict[str, tuple[str, int]] = {
    "input-bound": ("p4d.24xlarge", 8),
    "one-of-eight": ("p4d.24xlarge", 8),
    "notebook": ("g6e.xlarge", 1),
    "forgotten": ("g5.12xlarge", 4),
    "well-used": ("p5.48xlarge", 8),
}
EXPECTED_ADVICE: dict[str, frozenset[str]] = {
    "input-bound": frozenset({"input-bound"}),
    "one-of-eight": frozenset({"one-busy-gpu"}),
    "notebook": frozenset({"smaller-gpu", "bursty-interactive", "stop-idle"}),
    "forgotten": frozenset({"stop-idle"}),
    "well-used": frozenset(),
}
"""Advice each class must get (well-used: none at all)."""
OVERSIZED = frozenset({"one-of-eight", "notebook"})

Range = tuple[float, float]


@dataclass(frozen=True)
class Truth:
    busy: Decimal
    waiting: Decimal
    idle: Decimal
    peak_memory_percent: float


class _Minutes:
    def __init__(self, rng: random.Random, horizon: int, gpus: int) -> None:
        self.rng, self.horizon = rng, horizon
        self.gpus: list[list[float | None]] = [[] for _ in range(gpus)]
        self.memory: list[float | None] = []
        self.cpu: list[float | None] = []
        self.segments: list[Segment] = []

    @property
    def now(self) -> int:
        return len(self.memory)

    def add(self, minutes: int, kind: Kind, label: str, util: list[Range], mem: Range,
            cpu: Range) -> None:  # fmt: skip
        minutes = max(0, min(minutes, self.horizon - self.now))
        if not minutes:
            return
        start = self.now
        for _ in range(minutes):
            for index, series in enumerate(self.gpus):
                series.append(round(self.rng.uniform(*util[min(index, len(util) - 1)]), 1))
            self.memory.append(round(self.rng.uniform(*mem), 1))
            self.cpu.append(round(self.rng.uniform(*cpu), 1))
        self.segments.append(Segment(start, self.now, kind, label))


NOTHING: tuple[list[Range], Range, Range] = ([(0.0, 1.0)], (0.0, 0.3), (0.0, 3.0))


def _fill(trace_class: str, b: _Minutes) -> None:
    rng = b.rng
    if trace_class == "input-bound":
        b.add(b.horizon, "busy", "input-bound training", [(25, 45)], (60, 90), (88, 100))
    elif trace_class == "one-of-eight":
        b.add(b.horizon, "busy", "one GPU busy", [(85, 100), (0, 0)], (60, 90), (5, 12))
    elif trace_class == "well-used":
        b.add(b.horizon, "busy", "training", [(88, 100)], (70, 95), (30, 60))
    elif trace_class == "forgotten":
        b.add(rng.randint(120, 360), "busy", "job", [(85, 100)], (50, 90), (20, 50))
        b.add(b.horizon, "idle", "forgotten", *NOTHING)
    else:
        while b.now < b.horizon:
            day_end = b.now + rng.randint(8 * 60, 10 * 60)
            while b.now < min(day_end, b.horizon):
                b.add(rng.randint(10, 30), "busy", "burst", [(40, 95)], (15, 35), (10, 40))
                b.add(rng.randint(20, 60), "busy", "pause", [(0, 2)], (15, 35), (0, 5))
            b.add(rng.randint(12 * 60, 16 * 60), "idle", "night, shut down", *NOTHING)


def truth_of(trace: Trace) -> Truth:
    """The generator's dollar split of ``trace``, per minute from its labels."""
    per_minute = trace.hourly_usd / 60
    busy = waiting = idle = Decimal(0)
    gpus = trace.gpus or (trace.utilisation,)
    for minute in range(trace.minutes):
        if trace.kind_at(minute) == "idle":
            idle += per_minute
            continue
        mean = sum(g[minute] or 0.0 for g in gpus) / len(gpus)
        share = Decimal(str(round(mean, 3))) / 100
        busy += per_minute * share
        waiting += per_minute * (1 - share)
    peak = max((m for m in trace.memory or () if m is not None), default=0.0)
    return Truth(busy, waiting, idle, peak)


def generate_audit_fleet(
    *, seed: int, per_class: int, hours: int, prices: Mapping[str, Decimal]
) -> list[Trace]:
    """``per_class`` instances of each class; the same seed gives the same fleet."""
    rng = random.Random(seed)
    fleet: list[Trace] = []
    for trace_class, (instance_type, gpus) in AUDIT_CLASSES.items():
        for _ in range(per_class):
            b = _Minutes(rng, hours * 60, gpus)
            _fill(trace_class, b)
            per_gpu = tuple(tuple(g) for g in b.gpus)
            busiest = tuple(max(v or 0.0 for v in column) for column in zip(*per_gpu, strict=True))
            fleet.append(
                Trace(
                    instance_id=f"audit-{len(fleet):04d}",
                    instance_type=instance_type,
                    trace_class=trace_class,
                    hourly_usd=prices[instance_type],
                    utilisation=busiest,
                    segments=tuple(b.segments),
                    memory=tuple(b.memory),
                    cpu=tuple(b.cpu),
                    gpus=per_gpu,
                )
            )
    return fleet
