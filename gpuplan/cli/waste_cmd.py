"""``gpuplan waste --since 7d --by label:team``: idle GPU-hours and dollars, from the ledger.

A report over the decisions that ``stop-idle`` runs recorded (no cloud call), every
run whichever shard wrote it: time each instance was seen idle between runs, per month
and group (a label's value, or ``--by account``), with totals per group. Also reachable
as ``gpuplan fleet --report`` (the older spelling).
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gpuplan.cli.common import add_db, add_group_by, add_wide
from gpuplan.cli.output import say
from gpuplan.cli.render import format_cell, print_json, render_table, wrap

if TYPE_CHECKING:
    from gpuplan.core.audit.savings import Line


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "waste",
        help="idle GPU-hours and dollars wasted per group, from the ledger",
        description="From the decisions stop-idle runs recorded: GPU-hours and dollars "
        "spent while instances were seen idle, per month and group (a label's value or the "
        "account), with totals per group.",
    )
    p.add_argument("--since", default="7d", help="report period: 7d, 24h, 2026-12-01 (7d)")
    add_group_by(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    add_wide(p)
    add_db(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpuplan.core.audit.grouping import parse_group_by
    from gpuplan.core.audit.savings import total, totals
    from gpuplan.ledger import Ledger
    from gpuplan.usecases.audit.savings import parse_since, waste

    now = datetime.now(UTC)
    since, by = parse_since(args.since, now), parse_group_by(args.by)
    with Ledger.open(args.db) as ledger:
        lines, damaged = waste(ledger, since, by)
    for line in damaged:
        say("notice", line)
    key = by.column
    records = [_record(x, key) for x in lines]
    sums = [_record(x, key) for x in totals(lines)]
    overall = _record(total(lines), key)  # its group is "total"
    whole = {k: v for k, v in overall.items() if k != key}
    if args.json:
        print_json({"since": since, "by": key, "groups": records, "totals": sums,
                    "total": whole})  # fmt: skip
        return 0
    headers = ("idle GPU-h", "wasted $", "instances")
    print(render_table(("month", key, *headers), [[r["month"], *_cells(r, key)] for r in records],
                       align_right=[False, False, True, True, True]))  # fmt: skip
    print()
    rows = [_cells(r, key) for r in [*sums, overall]]
    print(render_table((key, *headers), rows, align_right=[False, True, True, True]))
    print(
        "\n"
        + wrap(
            f"Since {since:%Y-%m-%d %H:%M}Z, from stop-idle runs in the ledger: time seen "
            "idle between runs (at most one idle window per sighting). Totals per group over "
            "every month, dollars descending. Not the same count as `fleet` (idle min: how long "
            "the GPUs have been quiet, read back as far as the live-process window) or `audit` "
            "(whole periods classed idle, paid or not seen by a run): a lower bound."
        )
    )
    return 0


def _record(x: Line, key: str) -> dict[str, Any]:
    record: dict[str, Any] = {"month": x.month} if x.month else {}
    return {**record, key: x.group, "idle_gpu_hours": x.gpu_hours,
            "idle_instance_hours": x.hours, "wasted_usd": x.usd,
            "instances": x.instances}  # fmt: skip


def _cells(r: dict[str, Any], key: str) -> list[str]:
    return [r[key], format_cell(r["idle_gpu_hours"]), format_cell(r["wasted_usd"], money=True),
            str(r["instances"])]  # fmt: skip
