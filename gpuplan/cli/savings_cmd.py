"""``gpuplan savings``: compute dollars saved by stopping idle GPUs, per month and group.

Read from the ledger (no cloud call), every run whichever shard wrote it; grouped by a
label's value (``--by label:team``, the default) or by account/project/subscription
(``--by account``), with totals per group. Compute only: disks, IPs and commitments
keep billing while an instance is stopped.
"""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gpuplan.cli.common import Worded, add_db, add_group_by, add_wide, cloud_words
from gpuplan.cli.output import say
from gpuplan.cli.render import format_cell, print_json, render_table, wrap

if TYPE_CHECKING:
    from gpuplan.core.audit.savings import Line


_POLICY_HELP = (
    "only runs of this policy; also marks savings on types with active {} in its regions "
    "as doubtful (one read-only call per region)"
)


def _policy_help() -> str:
    """``--policy``'s help naming each registered cloud's reservations (``AWS reserved
    instances``)."""
    return _POLICY_HELP.format(
        cloud_words(
            lambda e: f"{e.title or e.provider.value} {e.reservations}" * bool(e.reservations)
        )
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "savings",
        help="compute dollars saved by stop-idle, per month and group (from the ledger)",
        description="Idle hours avoided x hourly price for every instance stop-idle stopped, "
        "per month and group (a label's value or the account), with totals per group. "
        "Compute only: disks, IPs and commitments keep billing.",
    )
    add_group_by(p)
    p.add_argument(
        "--policy",
        metavar="FILE",
        help=Worded(_POLICY_HELP.format("the cloud's reservations"), _policy_help),
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    add_wide(p)
    add_db(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpuplan.core.audit.grouping import parse_group_by
    from gpuplan.core.audit.savings import total, totals
    from gpuplan.ledger import Ledger
    from gpuplan.usecases.audit.savings import COMPUTE_ONLY, savings

    by = parse_group_by(args.by)
    name, reserved, problems = None, set[tuple[str, str]](), list[str]()
    billed: list[dict[str, Any]] = []
    if args.policy:
        from gpuplan.usecases.audit.savings import reserved_pairs
        from gpuplan.usecases.clouds.adapters import build_adapters
        from gpuplan.usecases.policy import load_policy

        policy = load_policy(args.policy)
        name = policy.name
        fleet = build_adapters(policy, None, os.environ)
        reserved, problems = reserved_pairs(fleet.adapters)
        problems = [*fleet.problems, *problems]
    with Ledger.open(args.db) as ledger:
        lines, damaged = savings(ledger, datetime.now(UTC), by, reserved, policy=name)
        if name is not None:
            billed, bad = _realised(ledger, name)
            damaged = [*damaged, *bad]
    for line in damaged:
        say("notice", line)
    key = by.column
    records = [_record(x, key) for x in lines]
    sums = [_record(x, key) for x in totals(lines)]
    overall = _record(total(lines), key)  # its group is "total"
    for line in problems:
        say("error", line)
    if args.json:
        whole = {k: v for k, v in overall.items() if k != key}
        print_json({"by": key, "savings": records, "totals": sums, "total": whole,
                    "note": COMPUTE_ONLY, "realised": billed, "realised_note": REALISED,
                    "problems": problems})  # fmt: skip
        return 1 if problems else 0
    headers = ("hours", "saved $", "of which doubtful $", "instances")
    right = [True, True, True, True]
    print(render_table(("month", key, *headers), [[r["month"], *_cells(r, key)] for r in records],
                       align_right=[False, False, *right]))  # fmt: skip
    print()
    rows = [_cells(r, key) for r in [*sums, overall]]
    print(render_table((key, *headers), rows, align_right=[False, *right]))
    _print_realised(billed)
    print("\n" + wrap(f"Estimated savings, {COMPUTE_ONLY}. Doubtful: the type has active "
          "reserved instances in that region (checked only with --policy). Totals per group "
          "over every month, dollars descending."))  # fmt: skip
    return 1 if problems else 0


REALISED = (
    "Realised: from the bill (`gpuplan bill sync`), per instance type gpuplan stopped, the "
    "billed cost the day before its first stop minus each billed day after (with --policy)."
)


def _realised(ledger: Any, policy: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Realised dollars per stopped type from the stored bill, as JSON records."""
    from gpuplan.usecases.audit.bill import realised

    found, damaged = realised(ledger, policy, datetime.now(UTC))
    return [{"instance_type": r.instance_type, "first_stop": r.stopped_on,
             "baseline_daily_usd": r.baseline_usd, "billed_days_after": r.days,
             "realised_usd": r.usd} for r in found], damaged  # fmt: skip


def _print_realised(billed: list[dict[str, Any]]) -> None:
    if not billed:
        return
    print()
    cells = [[r["instance_type"], str(r["first_stop"]),
              format_cell(r["baseline_daily_usd"], money=True), str(r["billed_days_after"]),
              format_cell(r["realised_usd"], money=True)] for r in billed]  # fmt: skip
    print(render_table(("type", "first stop", "billed/day before $", "days after", "realised $"),
                       cells, align_right=[False, False, True, True, True]))  # fmt: skip
    print(wrap(REALISED))


def _record(x: Line, key: str) -> dict[str, Any]:
    record: dict[str, Any] = {"month": x.month} if x.month else {}
    return {**record, key: x.group, "hours": x.hours, "usd": x.usd,
            "doubtful_usd": x.doubtful_usd, "instances": x.instances}  # fmt: skip


def _cells(r: dict[str, Any], key: str) -> list[str]:
    return [r[key], format_cell(r["hours"]), format_cell(r["usd"], money=True),
            format_cell(r["doubtful_usd"], money=True), str(r["instances"])]  # fmt: skip
