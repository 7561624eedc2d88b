"""``gpuplan savings``: compute dollars saved by stopping idle GPUs, per month and team.

Read from the ledger (no cloud call). Compute only: disks, IPs and commitments keep
billing while an instance is stopped.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from typing import Any

from gpuplan.cli.common import add_db
from gpuplan.cli.render import format_cell, print_json, render_table


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "savings",
        help="compute dollars saved by stop-idle, per month and team (from the ledger)",
        description="Idle hours avoided x hourly price for every instance stop-idle stopped, "
        "per month and label value. Compute only: disks, IPs and commitments keep billing.",
    )
    p.add_argument("--by", default="label:team", metavar="label:KEY", help="group by a label")
    p.add_argument(
        "--policy",
        metavar="FILE",
        help="only runs of this policy; also marks savings on types with active AWS "
        "reserved instances in its regions as doubtful (one read-only call per region)",
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    add_db(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpuplan.ledger import Ledger
    from gpuplan.usecases.savings import COMPUTE_ONLY, parse_by, savings

    key = parse_by(args.by)
    name, reserved, problems = None, set[tuple[str, str]](), list[str]()
    if args.policy:
        from gpuplan.usecases.policy import load_policy
        from gpuplan.usecases.providers import build_fleet
        from gpuplan.usecases.savings import reserved_pairs

        policy = load_policy(args.policy)
        name = policy.name
        fleet = build_fleet(policy, None, os.environ)
        reserved, problems = reserved_pairs(fleet.adapters)
        problems = [*fleet.problems, *problems]
    with Ledger.open(args.db) as ledger:
        lines, damaged = savings(ledger, datetime.now(UTC), key, reserved, policy=name)
    for line in damaged:
        print(f"gpuplan: notice: {line}", file=sys.stderr)
    records: list[dict[str, Any]] = [
        {"month": x.month, key: x.group, "hours": x.hours, "usd": x.usd,
         "doubtful_usd": x.doubtful_usd, "instances": x.instances}
        for x in lines
    ]  # fmt: skip
    for line in problems:
        print(f"gpuplan: error: {line}", file=sys.stderr)
    if args.json:
        print_json({"by": key, "savings": records, "note": COMPUTE_ONLY, "problems": problems})
        return 1 if problems else 0
    rows = [
        [r["month"], r[key], format_cell(r["hours"]), format_cell(r["usd"], money=True),
         format_cell(r["doubtful_usd"], money=True), str(r["instances"])]
        for r in records
    ]  # fmt: skip
    headers = ("month", key, "hours", "saved $", "of which doubtful $", "instances")
    print(render_table(headers, rows, align_right=[False, False, True, True, True, True]))
    print(f"\nEstimated savings, {COMPUTE_ONLY}. Doubtful: the type has active reserved "
          "instances in that region (checked only with --policy).")  # fmt: skip
    return 1 if problems else 0
