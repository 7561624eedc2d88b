"""Compare the GPU clouds' bundled prices with the dated readings of their pricing pages.

``pricing/gpu_cloud_readings.csv`` is the log of every dated reading of a GPU cloud's
public pricing page (or price API, or marketplace statistic) found for an offer: the
price per GPU-hour, the day it was read, the page and the public transcript that carries
it. A bundled row (``pricing/<cloud>.csv``) should carry the latest reading of its offer:
its on-demand price per GPU within 2% of it and its ``as_of`` that reading's day.

Per cloud, this prints how many bundled offers have a reading, how many are within 2% of
their latest reading, how many carry its day, and how many rest on a single reading (no
second reading at the same price). ``--rows`` lists every offer.

Run: ``python scripts/gpu_cloud_readings.py [BUNDLE_DIR]`` (default ``pricing``); to
measure an older bundle, point it at a folder holding that revision's CSVs, e.g.
``git show main:pricing/nebius.csv > /tmp/old/nebius.csv`` for each cloud. The readings
log is always the current one. ``tests/loaders/test_gpu_cloud_readings.py`` keeps every
bundled row on its latest reading.
"""

from __future__ import annotations

import argparse
import csv
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READINGS = ROOT / "pricing" / "gpu_cloud_readings.csv"
CLOUDS = ("lambda", "coreweave", "nebius", "crusoe", "runpod", "vast")
TOLERANCE = Decimal("0.02")


@dataclass(frozen=True)
class Reading:
    """One dated reading of one offer's on-demand price per GPU-hour."""

    cloud: str
    instance_type: str
    usd_per_gpu_hour: Decimal
    read_on: str
    page: str
    via: str


@dataclass(frozen=True)
class Check:
    """A bundled row set against the latest reading of its offer."""

    cloud: str
    instance_type: str
    per_gpu: Decimal
    as_of: str
    latest: Reading | None
    agreeing: int  # readings at the latest price (within 2%), the latest included

    @property
    def within(self) -> bool:
        return self.latest is not None and close(self.per_gpu, self.latest.usd_per_gpu_hour)

    @property
    def dated(self) -> bool:
        return self.latest is not None and self.as_of == self.latest.read_on


def close(price: Decimal, reference: Decimal) -> bool:
    return abs(price - reference) <= TOLERANCE * reference


def load_readings(path: Path = READINGS) -> list[Reading]:
    with path.open(newline="", encoding="utf-8") as f:
        return [
            Reading(
                r["cloud"],
                r["instance_type"],
                Decimal(r["usd_per_gpu_hour"]),
                r["read_on"],
                r["page"],
                r["via"],
            )
            for r in csv.DictReader(f)
        ]


def check_bundle(bundle: Path, readings: list[Reading]) -> list[Check]:
    by_offer: dict[tuple[str, str], list[Reading]] = {}
    for reading in readings:
        by_offer.setdefault((reading.cloud, reading.instance_type), []).append(reading)
    checks: list[Check] = []
    for cloud in CLOUDS:
        with (bundle / f"{cloud}.csv").open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                per_gpu = Decimal(row["on_demand_hourly"]) / Decimal(row["gpu_count"])
                found = sorted(
                    by_offer.get((cloud, row["instance_type"]), []), key=lambda r: r.read_on
                )
                latest = found[-1] if found else None
                agreeing = (
                    sum(close(r.usd_per_gpu_hour, latest.usd_per_gpu_hour) for r in found)
                    if latest
                    else 0
                )
                checks.append(
                    Check(cloud, row["instance_type"], per_gpu, row["as_of"], latest, agreeing)
                )
    return checks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("bundle", nargs="?", default=str(ROOT / "pricing"))
    parser.add_argument("--rows", action="store_true", help="list every offer")
    args = parser.parse_args()
    checks = check_bundle(Path(args.bundle), load_readings())
    print(f"{'cloud':10} {'offers':>6} {'read':>5} {'<=2%':>5} {'dated':>5} {'single':>6}")
    for cloud in (*CLOUDS, "all"):
        mine = [c for c in checks if cloud in (c.cloud, "all")]
        print(
            f"{cloud:10} {len(mine):6} {sum(c.latest is not None for c in mine):5}"
            f" {sum(c.within for c in mine):5} {sum(c.dated for c in mine):5}"
            f" {sum(c.latest is not None and c.agreeing < 2 for c in mine):6}"
        )
    if args.rows:
        for c in checks:
            ref = c.latest
            seen = f"{ref.usd_per_gpu_hour} read {ref.read_on}" if ref else "no reading"
            print(f"{c.cloud:10} {c.instance_type:28} {c.per_gpu:.4f}  {seen}  x{c.agreeing}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
