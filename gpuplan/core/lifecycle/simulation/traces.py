"""Utilisation traces: the format, and a seeded generator of realistic fleets.

A trace is one instance's signals per minute: the busiest GPU's utilisation (``None``
where not every GPU reported), the fullest GPU's memory in use (percent of its total) and
the instance CPU (percent), each ``None`` where not reported, plus *labelled segments*
saying what really happened. Labels are set up front by the generator, never inferred
from the rule under test: a pause inside live work (evaluation, checkpointing, a storage
stall, a CPU phase, a lunch with the notebook kernel alive) is ``busy``; a finished job,
a hung loop and an abandoned notebook are ``idle``.

Trace classes and their share of a generated fleet (``CLASS_MIX``); the pause lengths
are those a measured week of 80 instances showed (issue 12):

- ``finished-training`` 20%: training at 85-100% for 4-30 h with checkpoint stalls
  (3-15 min) and storage stalls (20-75 min, memory held), then the process exits.
- ``notebook`` 20%: sessions of bursts, think-time pauses (5-40 min) and lunches or
  meetings (30-90 min) with the kernel alive; then abandoned for 2-16 h, half with the
  kernel still holding its memory; the user comes back and starts a new session.
- ``eval-server`` 10%: model loaded, an evaluation (10-30 min) every 1.5-2 h, for
  12-48 h; then left running with the model loaded.
- ``cpu-phases`` 15%: epochs of 1-3 h with CPU phases of 40-120 min between them (GPU
  idle, CPU busy; memory held or freed), then finished.
- ``data-stalls`` 10%: training with loader stalls (2-20 min) and storage stalls up to
  75 min, the whole horizon.
- ``stalled-loop`` 15%: training for 2-10 h, then a hung loop: 0% GPU, memory held, one
  core busy (idle: nobody will come back to it).
- ``flaky-agent`` 10%: finished-training whose metrics agent drops 1-10 min at a time.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

from gpuplan.core.catalog.offers import Provider

Kind = Literal["busy", "idle"]


@dataclass(frozen=True)
class PriceList:
    """Where trace instances are priced: a trace folder names no cloud or region, so its
    instances, and the seeded fleet's, take the on-demand prices of one cloud's region
    (the registry's list of entries names it: ``trace_prices()``)."""

    provider: Provider
    region: str


@dataclass(frozen=True)
class Segment:
    """Minutes [start, end) of one labelled stretch."""

    start: int
    end: int
    kind: Kind
    label: str


@dataclass(frozen=True)
class Trace:
    instance_id: str
    instance_type: str
    trace_class: str
    hourly_usd: Decimal
    utilisation: tuple[float | None, ...]
    """Busiest GPU, percent, one value per minute; None = not every GPU reported."""
    segments: tuple[Segment, ...]
    memory: tuple[float | None, ...] | None = None
    """Fullest GPU's memory in use, percent of its total, per minute; None: no column."""
    cpu: tuple[float | None, ...] | None = None
    """Instance CPU, percent, per minute; None: no column."""
    gpus: tuple[tuple[float | None, ...], ...] | None = None
    """Optional per-GPU utilisation: one tuple per GPU (index order), one value a minute."""

    @property
    def minutes(self) -> int:
        return len(self.utilisation)

    def kind_at(self, minute: int) -> Kind:
        for seg in self.segments:
            if seg.start <= minute < seg.end:
                return seg.kind
        return "idle"


_NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_KIND = re.compile(r"[A-Za-z][A-Za-z0-9]{0,62}")
_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")


def workload_parts(unit_id: str) -> tuple[str, str, str] | None:
    """``(namespace, Kind, name)`` of a Kubernetes workload's unit id
    (``namespace/Kind/name``, each part as Kubernetes allows it); None for anything else."""
    parts = unit_id.split("/")
    if len(parts) != 3:
        return None
    namespace, kind, name = parts
    if not (_NAMESPACE.fullmatch(namespace) and _KIND.fullmatch(kind) and _NAME.fullmatch(name)):
        return None
    return namespace, kind, name


CLASS_MIX: dict[str, float] = {
    "finished-training": 0.20,
    "notebook": 0.20,
    "eval-server": 0.10,
    "cpu-phases": 0.15,
    "data-stalls": 0.10,
    "stalled-loop": 0.15,
    "flaky-agent": 0.10,
}

# (instance type, share) of a generated fleet: g-types with 1 GPU, p-types with 8.
DEFAULT_TYPES: tuple[tuple[str, float], ...] = (
    ("g5.xlarge", 0.3),
    ("g6.xlarge", 0.2),
    ("g5.12xlarge", 0.1),
    ("p4d.24xlarge", 0.2),
    ("p5.48xlarge", 0.2),
)


Range = tuple[float, float]
QUIET: Range = (0.0, 2.0)
NONE: Range = (0.0, 0.0)


class _Builder:
    """Appends labelled stretches of per-minute values."""

    def __init__(self, rng: random.Random, horizon: int) -> None:
        self.rng = rng
        self.horizon = horizon
        self.values: list[float | None] = []
        self.memory: list[float | None] = []
        self.cpu: list[float | None] = []
        self.segments: list[Segment] = []

    @property
    def now(self) -> int:
        return len(self.values)

    @property
    def full(self) -> bool:
        return self.now >= self.horizon

    def add(self, minutes: int, kind: Kind, label: str, gpu: Range, mem: Range, cpu: Range) -> None:
        minutes = max(0, min(minutes, self.horizon - self.now))
        if minutes == 0:
            return
        start = self.now
        uniform = self.rng.uniform
        (g0, g1), (m0, m1), (c0, c1) = gpu, mem, cpu
        values, memory, cpus = self.values, self.memory, self.cpu
        held = round(uniform(m0, m1), 1)  # memory stays put within a stretch
        for _ in range(minutes):  # drawn in this order: GPU, memory (if it moves), CPU
            values.append(round(uniform(g0, g1), 1))
            memory.append(held if m0 > 0 else round(uniform(m0, m1), 1))
            cpus.append(round(uniform(c0, c1), 1))
        self.segments.append(Segment(start, self.now, kind, label))

    def minutes(self, low_h: float, high_h: float) -> int:
        return int(self.rng.uniform(low_h, high_h) * 60)

    def done_at(self, low_h: float, high_h: float) -> int:
        return min(self.horizon, self.now + self.minutes(low_h, high_h))


TRAIN: tuple[Range, Range, Range] = ((85, 100), (60, 95), (15, 60))
FINISHED: tuple[Range, Range, Range] = (QUIET, (0, 0.3), (0, 3))


def _train_with_stalls(b: _Builder, until: int, storage_odds: float) -> None:
    while b.now < until and not b.full:
        b.add(min(b.rng.randint(30, 180), until - b.now), "busy", "training", *TRAIN)
        if b.now >= until:
            return
        if b.rng.random() < storage_odds:
            b.add(b.rng.randint(20, 75), "busy", "storage stall", QUIET, (60, 95), (0, 4))
        else:
            b.add(b.rng.randint(3, 15), "busy", "checkpoint", QUIET, (60, 95), (5, 30))


def _finished_training(b: _Builder) -> None:
    _train_with_stalls(b, b.done_at(4, 30), 0.15)
    b.add(b.horizon, "idle", "finished", *FINISHED)


def _notebook(b: _Builder) -> None:
    while not b.full:
        session_end = b.done_at(1, 5)
        mem: Range = (20, 70)
        b.add(b.rng.randint(10, 60), "busy", "burst", (20, 90), mem, (5, 40))
        while b.now < session_end and not b.full:
            if b.rng.random() < 0.25:
                b.add(b.rng.randint(30, 90), "busy", "lunch or meeting", QUIET, mem, (0, 3))
            else:
                b.add(b.rng.randint(5, 40), "busy", "think-time pause", QUIET, mem, (0, 5))
            b.add(b.rng.randint(10, 60), "busy", "burst", (20, 90), mem, (5, 40))
        if b.rng.random() < 0.5:
            b.add(b.minutes(2, 16), "idle", "abandoned, kernel alive", QUIET, mem, (0, 3))
        else:
            b.add(b.minutes(2, 16), "idle", "abandoned, kernel shut down", *FINISHED)


def _eval_server(b: _Builder) -> None:
    end = b.done_at(12, 48)
    mem: Range = (40, 80)
    while b.now < end and not b.full:
        b.add(b.rng.randint(10, 30), "busy", "evaluation", (60, 100), mem, (20, 60))
        b.add(b.rng.randint(90, 120), "busy", "waiting for a checkpoint", QUIET, mem, (0, 3))
    b.add(b.horizon, "idle", "forgotten, model loaded", QUIET, mem, (0, 3))


def _cpu_phases(b: _Builder) -> None:
    end = b.done_at(20, 60)
    while b.now < end and not b.full:
        b.add(b.minutes(1, 3), "busy", "epoch", *TRAIN)
        mem: Range = (30, 90) if b.rng.random() < 0.5 else (0, 0.3)
        b.add(b.rng.randint(40, 120), "busy", "CPU phase", QUIET, mem, (40, 100))
    b.add(b.horizon, "idle", "finished", *FINISHED)


def _data_stalls(b: _Builder) -> None:
    while not b.full:
        b.add(b.rng.randint(20, 120), "busy", "training", *TRAIN)
        if b.rng.random() < 0.1:
            b.add(b.rng.randint(20, 75), "busy", "storage stall", QUIET, (60, 95), (0, 4))
        else:
            b.add(b.rng.randint(2, 20), "busy", "data-loading stall", (0, 3), (60, 95), (5, 60))


def _stalled_loop(b: _Builder) -> None:
    _train_with_stalls(b, b.done_at(2, 10), 0.1)
    core = 100 / b.rng.choice((4, 8, 16, 48, 96))
    b.add(b.horizon, "idle", "hung loop", NONE, (60, 95), (core * 0.9, core))


def _flaky_agent(b: _Builder) -> None:
    _finished_training(b)
    minute = b.rng.randint(0, 120)
    while minute < b.horizon:
        gap = b.rng.randint(1, 10)
        for m in range(minute, min(minute + gap, b.horizon)):
            b.values[m] = b.memory[m] = b.cpu[m] = None
        minute += gap + b.rng.randint(60, 240)


_GENERATORS = {
    "finished-training": _finished_training,
    "notebook": _notebook,
    "eval-server": _eval_server,
    "cpu-phases": _cpu_phases,
    "data-stalls": _data_stalls,
    "stalled-loop": _stalled_loop,
    "flaky-agent": _flaky_agent,
}


def generate_fleet(
    *,
    seed: int,
    instances: int,
    hours: int,
    prices: Mapping[str, Decimal],
    types: Sequence[tuple[str, float]] = DEFAULT_TYPES,
    mix: Mapping[str, float] = CLASS_MIX,
) -> list[Trace]:
    """``instances`` traces of ``hours`` each; the same seed gives the same fleet."""
    rng = random.Random(seed)
    classes = _apportion(mix, instances)
    rng.shuffle(classes)
    type_names = [t for t, _ in types]
    weights = [w for _, w in types]
    fleet: list[Trace] = []
    for index, trace_class in enumerate(classes):
        builder = _Builder(rng, hours * 60)
        _GENERATORS[trace_class](builder)
        instance_type = rng.choices(type_names, weights)[0]
        fleet.append(
            Trace(
                instance_id=f"sim-{index:04d}",
                instance_type=instance_type,
                trace_class=trace_class,
                hourly_usd=prices[instance_type],
                utilisation=tuple(builder.values),
                segments=tuple(builder.segments),
                memory=tuple(builder.memory),
                cpu=tuple(builder.cpu),
            )
        )
    return fleet


def _apportion(mix: Mapping[str, float], total: int) -> list[str]:
    """Exactly ``total`` class names in the mix's proportions (largest remainders)."""
    weight = sum(mix.values())
    exact = {name: total * share / weight for name, share in mix.items()}
    counts = {name: int(value) for name, value in exact.items()}
    leftovers = sorted(exact, key=lambda n: exact[n] - counts[n], reverse=True)
    for name in leftovers[: total - sum(counts.values())]:
        counts[name] += 1
    return [name for name, count in counts.items() for _ in range(count)]
