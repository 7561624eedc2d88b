"""``gpuplan waste --since 7d --by label:team``: idle GPU-hours and dollars, from the ledger.

An audit view over the decisions that ``stop-idle`` runs recorded (no cloud call):
time each instance was seen idle between runs, per month and label value. Also
reachable as ``gpuplan fleet --report`` (the older spelling).
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from typing import Any

from gpuplan.cli.common import add_db
from gpuplan.cli.render import format_cell, print_json, render_table


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "waste",
        help="idle GPU-hours and dollars wasted per group, from the ledger",
        description="From the decisions stop-idle runs recorded: GPU-hours and dollars "
        "spent while instances were seen idle, per month and label value.",
    )
    p.add_argument("--since", default="7d", help="report period: 7d, 24h, 2026-12-01 (7d)")
    p.add_argument("--by", default="label:team", metavar="label:KEY", help="grouping")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_db(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpuplan.ledger import Ledger
    from gpuplan.usecases.savings import parse_by, parse_since, waste

    now = datetime.now(UTC)
    since, key = parse_since(args.since, now), parse_by(args.by)
    with Ledger.open(args.db) as ledger:
        lines, damaged = waste(ledger, since, key)
    for line in damaged:
        print(f"gpuplan: notice: {line}", file=sys.stderr)
    records: list[dict[str, Any]] = [
        {"month": x.month, key: x.group, "idle_gpu_hours": x.gpu_hours,
         "idle_instance_hours": x.hours, "wasted_usd": x.usd, "instances": x.instances}
        for x in lines
    ]  # fmt: skip
    if args.json:
        print_json({"since": since, "by": key, "groups": records})
        return 0
    rows = [
        [r["month"], r[key], format_cell(r["idle_gpu_hours"]),
         format_cell(r["wasted_usd"], money=True), str(r["instances"])]
        for r in records
    ]  # fmt: skip
    print(render_table(("month", key, "idle GPU-h", "wasted $", "instances"), rows,
                       align_right=[False, False, True, True, True]))  # fmt: skip
    print(
        f"\nSince {since:%Y-%m-%d %H:%M}Z, from stop-idle runs in the ledger: time seen "
        "idle between runs (at most one idle window per sighting)."
    )
    return 0
