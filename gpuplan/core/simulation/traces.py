"""Utilisation traces: the format, and a seeded generator of realistic fleets.

A trace is one instance's busiest-GPU utilisation per minute (``None`` where not every
GPU reported) plus *labelled segments* saying what really happened. Labels are set up
front by the generator, not inferred: a pause shorter than a sensible window
(evaluation, checkpointing, data-loading stalls, memory held at 0% between epochs) is
``busy``; a finished job, a stalled loop and an abandoned notebook are ``idle``.

Trace classes and their share of a generated fleet (``CLASS_MIX``):

- ``finished-training`` 25%: training at 85-100% for 4-30 h, then idle to the end.
- ``notebook`` 25%: 1-4 h sessions of bursts (10-60 min at 20-90%) separated by
  think-time pauses (5-40 min, busy), ending on a burst, then abandoned for 2-16 h; the
  user comes back and restarts.
- ``epoch-eval`` 15%: 1-3 h epochs with a 10-45 min pause at 0% between them
  (evaluation on CPU, memory held), ending after the last epoch at 30-60 h, then idle.
- ``data-stalls`` 15%: training with 2-20 min loader stalls at 0-3%, the whole horizon.
- ``stalled-loop`` 10%: training for 2-10 h, then a hung loop at 0% to the end.
- ``flaky-agent`` 10%: finished-training whose metrics agent drops 1-10 min at a time.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

Kind = Literal["busy", "idle"]


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

    @property
    def minutes(self) -> int:
        return len(self.utilisation)

    def kind_at(self, minute: int) -> Kind:
        for seg in self.segments:
            if seg.start <= minute < seg.end:
                return seg.kind
        return "idle"


CLASS_MIX: dict[str, float] = {
    "finished-training": 0.25,
    "notebook": 0.25,
    "epoch-eval": 0.15,
    "data-stalls": 0.15,
    "stalled-loop": 0.10,
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


class _Builder:
    """Appends labelled stretches of per-minute values."""

    def __init__(self, rng: random.Random, horizon: int) -> None:
        self.rng = rng
        self.horizon = horizon
        self.values: list[float | None] = []
        self.segments: list[Segment] = []

    @property
    def now(self) -> int:
        return len(self.values)

    @property
    def full(self) -> bool:
        return self.now >= self.horizon

    def add(self, minutes: int, kind: Kind, label: str, low: float, high: float) -> None:
        minutes = max(0, min(minutes, self.horizon - self.now))
        if minutes == 0:
            return
        start = self.now
        self.values.extend(round(self.rng.uniform(low, high), 1) for _ in range(minutes))
        self.segments.append(Segment(start, self.now, kind, label))

    def minutes(self, low_h: float, high_h: float) -> int:
        return int(self.rng.uniform(low_h, high_h) * 60)


def _finished_training(b: _Builder) -> None:
    b.add(b.minutes(4, 30), "busy", "training", 85, 100)
    b.add(b.horizon, "idle", "finished", 0, 1)


def _notebook(b: _Builder) -> None:
    while not b.full:
        session_end = b.now + b.minutes(1, 4)
        b.add(b.rng.randint(10, 60), "busy", "burst", 20, 90)
        while b.now < session_end and not b.full:
            b.add(b.rng.randint(5, 40), "busy", "think-time pause", 0, 2)
            b.add(b.rng.randint(10, 60), "busy", "burst", 20, 90)
        b.add(b.minutes(2, 16), "idle", "abandoned", 0, 1)


def _epoch_eval(b: _Builder) -> None:
    end = b.minutes(30, 60)
    b.add(b.minutes(1, 3), "busy", "epoch", 80, 100)
    while b.now < end and not b.full:
        b.add(b.rng.randint(10, 45), "busy", "evaluation, memory held at 0%", 0, 0)
        b.add(b.minutes(1, 3), "busy", "epoch", 80, 100)
    b.add(b.horizon, "idle", "finished", 0, 1)


def _data_stalls(b: _Builder) -> None:
    while not b.full:
        b.add(b.rng.randint(20, 120), "busy", "training", 70, 100)
        b.add(b.rng.randint(2, 20), "busy", "data-loading stall", 0, 3)


def _stalled_loop(b: _Builder) -> None:
    b.add(b.minutes(2, 10), "busy", "training", 85, 100)
    b.add(b.horizon, "idle", "stalled loop", 0, 0)


def _flaky_agent(b: _Builder) -> None:
    _finished_training(b)
    minute = b.rng.randint(0, 120)
    while minute < b.horizon:
        gap = b.rng.randint(1, 10)
        for m in range(minute, min(minute + gap, b.horizon)):
            b.values[m] = None
        minute += gap + b.rng.randint(60, 240)


_GENERATORS = {
    "finished-training": _finished_training,
    "notebook": _notebook,
    "epoch-eval": _epoch_eval,
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
