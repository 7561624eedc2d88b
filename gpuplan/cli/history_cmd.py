"""``gpuplan history``: the lifecycle runs recorded in the ledger, newest first."""

from __future__ import annotations

import argparse
from typing import Any

from gpuplan.cli.common import add_db, add_wide, print_notices, row_limit
from gpuplan.cli.render import print_json, render_table

KINDS = ("stop-idle", "schedule")
"""The lifecycle runs history lists (``runs.kind``: the command that recorded them)."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "history",
        help="lifecycle runs recorded in the ledger: what was decided and done",
        description="List stop-idle and schedule runs from the ledger with their outcome counts.",
    )
    p.add_argument("--kind", choices=KINDS, help="only runs of this command (default: both)")
    p.add_argument("--policy", metavar="NAME", help="only runs of this policy name")
    p.add_argument("--limit", type=row_limit, default=20, metavar="N", help="at most N runs (20)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_wide(p)
    add_db(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpuplan.ledger import Ledger
    from gpuplan.ledger.queries import run_tallies
    from gpuplan.ledger.steps import made_in_runs

    with Ledger.open(args.db) as ledger:
        runs = [r for r in ledger.runs(limit=args.limit * 5, policy=args.policy)]
        kinds = (args.kind,) if args.kind else KINDS
        runs = [r for r in runs if r.kind in kinds][: args.limit]
        tallies = run_tallies(ledger, [r.id for r in runs])
        made = made_in_runs(ledger, [r.id for r in runs])
        print_notices(str(row) for row in ledger.damaged)
    records: list[dict[str, Any]] = [
        {
            "run_id": r.id,
            "kind": r.kind,
            "policy": r.policy,
            "shard": r.shard or None,
            "started_at": r.started_at,
            "dry_run": r.dry_run,
            "status": r.status,
            "finished_at": r.finished_at,
            # A killed run is closed by a later run, which names itself here.
            "closed_by_run": r.summary.get("closed_by_run"),
            # Counted from the decision and action rows, which are written as the run
            # goes: a run killed before its summary still shows what it did.
            "actions": tallies[r.id].outcomes,
            "verdicts": tallies[r.id].verdicts,
            "acted": tallies[r.id].acted,
            "problems": r.summary.get("problems", []),
            # What its actions' steps made (snapshot ids), a killed call's included.
            "made": made[r.id],
        }
        for r in runs
    ]
    if args.json:
        print_json(records)
        return 0
    rows = [
        [
            str(r["run_id"]),
            f"{r['started_at']:%Y-%m-%d %H:%M}",
            r["policy"],
            r["kind"],
            "dry run" if r["dry_run"] else "apply",
            r["status"],
            ", ".join(f"{n} {k}" for k, n in sorted(r["verdicts"].items())),
            ", ".join(f"{n} {k}" for k, n in sorted(r["actions"].items()) if k != "none") or "-",
        ]
        for r in records
    ]
    headers = ("run", "started (UTC)", "policy", "kind", "mode", "status", "verdicts", "actions")
    # The kind, the policy name, then the start time, go first; the actions wrap.
    print(render_table(headers, rows, drop=(3, 2, 1), wrap_last=True))
    return 0
