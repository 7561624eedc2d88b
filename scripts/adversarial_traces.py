"""A second, independent-style trace set for the idle simulator (format v2, 1-minute rows).

Run: python scripts/adversarial_traces.py DIR [--seed N] [--instances N] [--hours N]
        [--office] [--outage HOUR:MINUTES [--outage-share S] [--outage-kind all|gpu]]
then: gpuplan simulate --traces DIR --json

``--office`` puts the fleet on a team's clock (minute 0 is Monday 00:00): notebooks are
used on weekdays from 08:00-10:30 to 17:00-19:30 (Fridays to 15:30-17:30, so many go idle
together), with the kernel left alive overnight 60% of the time, idle over the weekend;
training and sweeps are launched in working hours. ``--outage 50:240`` makes every
instance's agent report zeros (GPU, memory and CPU) from hour 50 for 240 minutes, labels
unchanged: a broken exporter. ``--outage-share 0.3`` breaks only that share of the
agents (the same instances for a given seed), ``--outage-kind gpu`` zeroes only GPU
utilisation while GPU memory and CPU keep their values (a broken DCGM field, a driver
update that resets the utilisation counter).

Written apart from the built-in generator (gpuplan/core/lifecycle/simulation/traces.py) on purpose,
so the default policy is not only judged on the distributions it was tuned on. It differs
in ways that hurt: gamma/lognormal pause lengths with long tails (evaluation waits of
mean 110 min that reach past 150, storage stalls to 90 min, lunches to 100 min), Gaussian
jitter on every signal (values below 0 or above 100 are written as they come), CPU at
5-minute resolution only (empty cells in between, as EC2 basic monitoring), metric gaps
as empty cells *and* as missing rows, GPU memory held by crashed or hung jobs, sweeps
of short jobs, instances forgotten from minute 0, and instance types from all three
clouds, some priced in fleet.csv and some left to the catalog.

Labels are this script's ground truth: any pause inside a live session (a person or a
scheduler comes back to the same process) is ``busy``; finished, crashed, hung,
abandoned and forgotten stretches are ``idle``. Imports nothing from gpuplan.
"""

from __future__ import annotations

import argparse
import csv
import math
import random
from collections.abc import Callable
from pathlib import Path

Row = tuple[float | None, float | None, float | None, str, str]
TYPES = [
    ("g5.xlarge", ""),
    ("g6e.xlarge", ""),
    ("p4d.24xlarge", ""),
    ("p5.48xlarge", "98.32"),
    ("a2-highgpu-1g", ""),
    ("Standard_NC24ads_A100_v4", "3.673"),
]
CORES = {"g5.xlarge": 4, "g6e.xlarge": 4, "p4d.24xlarge": 96, "p5.48xlarge": 192,
         "a2-highgpu-1g": 12, "Standard_NC24ads_A100_v4": 24}  # fmt: skip


class Writer:
    def __init__(self, rng: random.Random, horizon: int, cores: int) -> None:
        self.rng, self.horizon, self.cores = rng, horizon, cores
        self.rows: list[Row] = []

    @property
    def full(self) -> bool:
        return len(self.rows) >= self.horizon

    def span(self, minutes: float, kind: str, label: str, gpu: float, mem: float, cpu: float):
        jitter = self.rng.gauss
        for _ in range(max(1, int(minutes))):
            if self.full:
                return
            self.rows.append((jitter(gpu, 2 + gpu * 0.05), jitter(mem, 0.3 + mem * 0.02),
                              jitter(cpu, 1.5 + cpu * 0.1), kind, label))  # fmt: skip

    def gamma(self, mean: float, sd: float) -> float:
        shape = (mean / sd) ** 2
        return self.rng.gammavariate(shape, mean / shape)


def pretrain(w: Writer) -> None:
    end = w.rng.uniform(6, 60) * 60
    mem = w.rng.uniform(70, 97)
    while len(w.rows) < end and not w.full:
        w.span(w.rng.lognormvariate(math.log(70), 0.5), "busy", "training", 92, mem, 35)
        roll = w.rng.random()
        if roll < 0.12:
            w.span(min(90, w.rng.expovariate(1 / 35)), "busy", "storage stall", 0.5, mem, 2)
        else:
            w.span(w.rng.uniform(2, 20), "busy", "checkpoint", 1, mem, 25)
    roll = w.rng.random()
    if roll < 0.5:
        w.span(w.horizon, "idle", "job exited", 0, 0.2, 1)
    elif roll < 0.8:
        w.span(w.horizon, "idle", "crashed, hung NCCL", 0, mem, 100 / w.cores)
    else:
        w.span(w.horizon, "idle", "crashed, process gone", 0, 0, 0.5)


def eval_server(w: Writer) -> None:
    end = w.rng.uniform(10, 72) * 60
    mem = w.rng.uniform(30, 85)
    while len(w.rows) < end and not w.full:
        w.span(w.rng.uniform(5, 40), "busy", "evaluation", 80, mem, 40)
        w.span(w.gamma(110, 20), "busy", "waiting for next checkpoint", 0, mem, 1)
    w.span(w.horizon, "idle", "forgotten, model loaded", 0, mem, 1)


def notebook(w: Writer) -> None:
    while not w.full:
        mem = w.rng.uniform(5, 40)
        session_end = len(w.rows) + w.rng.uniform(1.5, 7) * 60
        while len(w.rows) < session_end and not w.full:
            w.span(w.rng.lognormvariate(math.log(20), 0.7), "busy", "cell running", 60, mem, 20)
            if w.rng.random() < 0.2:
                w.span(w.rng.uniform(30, 100), "busy", "lunch or meeting", 0, mem, 0.8)
            else:
                w.span(w.rng.expovariate(1 / 12), "busy", "reading, typing", 0, mem, 2)
        if w.rng.random() < 0.6:
            w.span(w.rng.uniform(6, 16) * 60, "idle", "gone home, kernel alive", 0, mem, 0.8)
        else:
            w.span(w.rng.uniform(1, 10) * 60, "idle", "kernel shut down", 0, 0.1, 0.5)


def cpu_phases(w: Writer) -> None:
    w.span(w.rng.uniform(40, 140), "busy", "preprocessing, no GPU process yet", 0, 0, 75)
    end = w.rng.uniform(12, 70) * 60
    mem = w.rng.uniform(40, 90)
    while len(w.rows) < end and not w.full:
        w.span(w.rng.uniform(60, 200), "busy", "epoch", 95, mem, 30)
        w.span(w.rng.uniform(40, 120), "busy", "CPU feature pass", 0.5, mem, 80)
    w.span(w.horizon, "idle", "finished", 0, 0.1, 1)


def sweep(w: Writer) -> None:
    end = w.rng.uniform(8, 40) * 60
    while len(w.rows) < end and not w.full:
        w.span(w.rng.uniform(20, 90), "busy", "sweep trial", 88, w.rng.uniform(20, 90), 30)
        w.span(w.rng.uniform(2, 25), "busy", "scheduler between trials", 0, 0, 6)
    w.span(w.horizon, "idle", "sweep done", 0, 0, 0.7)


def forgotten(w: Writer) -> None:
    w.span(w.horizon, "idle", "forgotten since launch", 0, 0, 0.6)


DAY = 24 * 60


def _clock(w: Writer, minute: float) -> None:
    """Idle (weekend, night) until ``minute``; the kernel may still be alive."""
    w.span(minute - len(w.rows), "idle", "off hours, left running", 0, 0.1, 0.5)


def office_notebook(w: Writer) -> None:
    """A person's notebook on the team's clock: weekdays only, home in the evening."""
    mem = w.rng.uniform(5, 40)
    for day in range(w.horizon // DAY + 1):
        if day % 7 >= 5:
            continue
        arrive = day * DAY + w.rng.uniform(8, 10.5) * 60
        leave = (
            day * DAY
            + (w.rng.uniform(15.5, 17.5) if day % 7 == 4 else w.rng.uniform(17, 19.5)) * 60
        )
        if arrive > len(w.rows):
            _clock(w, arrive) if w.rng.random() < 0.4 else w.span(
                arrive - len(w.rows), "idle", "gone home, kernel alive", 0, mem, 0.8
            )
        while len(w.rows) < leave and not w.full:
            w.span(w.rng.lognormvariate(math.log(20), 0.7), "busy", "cell running", 60, mem, 20)
            if w.rng.random() < 0.15:
                w.span(w.rng.uniform(30, 90), "busy", "lunch or meeting", 0, mem, 0.8)
            else:
                w.span(w.rng.expovariate(1 / 12), "busy", "reading, typing", 0, mem, 2)
    w.span(w.horizon, "idle", "gone home, kernel alive", 0, mem, 0.8)


def office_job(build: Callable[[Writer], None]) -> Callable[[Writer], None]:
    """``build`` launched at a random working hour of a random weekday."""

    def start(w: Writer) -> None:
        day = w.rng.choice([d for d in range(max(1, w.horizon // DAY)) if d % 7 < 5])
        _clock(w, min(w.horizon, day * DAY + w.rng.uniform(9, 18) * 60))
        build(w)

    return start


def outage(rows: list[Row | None], start: int, length: int, kind: str = "all") -> list[Row | None]:
    """The agent reports zeros (every signal, or GPU utilisation only: ``kind`` "gpu");
    what really happened is unchanged."""
    out: list[Row | None] = []
    for i, r in enumerate(rows):
        if r is None or not start <= i < start + length:
            out.append(r)
        elif kind == "gpu":
            out.append((0.0, r[1], r[2], r[3], r[4]))
        else:
            out.append((0.0, 0.0, 0.0, r[3], r[4]))
    return out


CLASSES: list[tuple[str, float, Callable[[Writer], None]]] = [
    ("pretrain", 0.25, pretrain),
    ("eval-server", 0.12, eval_server),
    ("notebook", 0.25, notebook),
    ("cpu-phases", 0.13, cpu_phases),
    ("sweep", 0.15, sweep),
    ("forgotten", 0.10, forgotten),
]


OFFICE: list[tuple[str, float, Callable[[Writer], None]]] = [
    ("pretrain", 0.15, office_job(pretrain)),
    ("eval-server", 0.10, office_job(eval_server)),
    ("notebook", 0.45, office_notebook),
    ("cpu-phases", 0.10, office_job(cpu_phases)),
    ("sweep", 0.15, office_job(sweep)),
    ("forgotten", 0.05, forgotten),
]


def damage(w: Writer, rng: random.Random) -> list[Row | None]:
    """Gaps as empty cells and as missing rows (None); CPU only every 5 minutes."""
    rows: list[Row | None] = list(w.rows)
    if rng.random() < 0.4:
        minute = rng.randint(0, 200)
        while minute < len(rows):
            length = rng.randint(1, 15)
            drop_rows = rng.random() < 0.5
            for m in range(minute, min(minute + length, len(rows))):
                row = rows[m]
                if row is not None:
                    rows[m] = None if drop_rows else (None, None, None, row[3], row[4])
            minute += length + rng.randint(60, 400)
    if rng.random() < 0.5:
        rows = [r if r is None or i % 5 == 0 else (*r[:2], None, *r[3:]) for i, r in
                enumerate(rows)]  # fmt: skip
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--instances", type=int, default=90)
    parser.add_argument("--hours", type=int, default=168)
    parser.add_argument("--office", action="store_true", help="a team's weekly clock")
    parser.add_argument("--outage", default="", help="HOUR:MINUTES of zeros from the agents")
    parser.add_argument("--outage-share", type=float, default=1.0,
                        help="share of the instances whose agent breaks (default all)")  # fmt: skip
    parser.add_argument("--outage-kind", choices=("all", "gpu"), default="all",
                        help="all: every signal reads 0; gpu: GPU utilisation only")  # fmt: skip
    args = parser.parse_args()
    broken = set(random.Random(f"outage-{args.seed}").sample(
        range(args.instances), round(args.outage_share * args.instances)))  # fmt: skip
    rng = random.Random(args.seed)
    classes = OFFICE if args.office else CLASSES
    hour, _, length = args.outage.partition(":")
    out = Path(args.directory)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "fleet.csv").open("w", newline="") as fh:
        fleet = csv.writer(fh, lineterminator="\n")
        fleet.writerow(["instance_id", "instance_type", "trace_class", "hourly_usd"])
        for index in range(args.instances):
            name, _, build = rng.choices(classes, [c[1] for c in classes])[0]
            instance_type, price = rng.choice(TYPES)
            writer = Writer(rng, args.hours * 60, CORES[instance_type])
            build(writer)
            instance_id = f"adv-{index:03d}"
            fleet.writerow([instance_id, instance_type, name, price])
            rows = damage(writer, rng)
            if args.outage and index in broken:
                rows = outage(rows, int(hour) * 60, int(length), args.outage_kind)
            write_one(out / f"{instance_id}.csv", rows)
    print(f"wrote {args.instances} traces to {out}")
    return 0


def write_one(path: Path, rows: list[Row | None]) -> None:
    with path.open("w", newline="") as fh:
        out = csv.writer(fh, lineterminator="\n")
        out.writerow(["minute", "utilisation", "gpu_memory_used_percent", "cpu_percent",
                      "kind", "label"])  # fmt: skip
        for minute, row in enumerate(rows):
            if row is None:
                continue
            cells = ["" if v is None else f"{v:.1f}" for v in row[:3]]
            out.writerow([minute, *cells, row[3], row[4]])


if __name__ == "__main__":
    raise SystemExit(main())
