"""``gpuplan bill sync|reconcile``: the clouds' actual spend beside gpuplan's estimate.

``bill reconcile``, not ``reconcile``: ``gpuplan.usecases.lifecycle.reconcile`` already means
settling the ledger's pending intents after a killed run.
"""

from __future__ import annotations

import argparse
import os
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from gpuplan.cli.common import Worded, add_db, add_wide, cloud_words, print_notices
from gpuplan.cli.output import say
from gpuplan.cli.render import format_cell, print_json, render_table, wrap


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a date such as 2026-12-01, got {text!r}"
        ) from None


_DESCRIPTION = (
    "Read actual daily spend from {} (read-only), store it in the ledger beside "
    "gpuplan's list-price estimate, and reconcile the two. Cost data is about a day "
    "behind. Exit 0 ok, 1 when a source failed or a gap is over the policy's "
    "threshold, 2 bad input."
)


def _description() -> str:
    """The description naming each registered cloud's cost API (``cost_api``)."""
    return _DESCRIPTION.format(cloud_words(lambda e: e.cost_api if e.cost_sources else ""))


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "bill",
        help="actual spend from each cloud's cost API, and its reconciliation",
        description=Worded(_DESCRIPTION.format("each cloud's cost API"), _description),
    )
    inner = p.add_subparsers(dest="bill_command", metavar="SUBCOMMAND", parser_class=type(p))
    inner.required = True
    sync = inner.add_parser(
        "sync",
        help="fetch daily actuals into the ledger (read-only; Cost Explorer bills $0.01 a call)",
        description="Fetch each day's cost from --since to today from every cost source the "
        "policy names, replace those days in the ledger, and store gpuplan's estimate for "
        "the same days beside them. Exit 1 when a source failed.",
    )
    rec = inner.add_parser(
        "reconcile",
        help="estimate vs bill per instance type and day, the gap named",
        description="From the ledger (run `gpuplan bill sync` first; no cloud call): per "
        "provider, day and instance type up to the last final day, list-price estimate vs "
        "billed, the gap split into commitments, unseen instances, disks, discounts and "
        "what is unexplained. Exit 1 when a gap is over bill.gap_percent and "
        "bill.gap_min_usd.",
    )
    for q in (sync, rec):
        q.add_argument("--policy", required=True, metavar="FILE", help="policy file (YAML)")
        q.add_argument(
            "--since", type=_day, metavar="DATE", help="first day (default: 14 days ago)"
        )
        q.add_argument("--json", action="store_true", help="print JSON")
        add_db(q)
    add_wide(rec)
    sync.set_defaults(handler=run_sync)
    rec.set_defaults(handler=run_reconcile)


def run_sync(args: argparse.Namespace) -> int:
    from gpuplan.ledger import Ledger
    from gpuplan.usecases.audit.bill import LAG_NOTE, cost_sources, sync
    from gpuplan.usecases.policy import load_policy

    policy = load_policy(args.policy)
    now = datetime.now(UTC)
    sources, problems = cost_sources(policy, os.environ)
    with Ledger.open(args.db) as ledger:
        outcome = sync(policy, ledger, sources, now=now, since=args.since)
    problems = [*problems, *outcome.problems]
    record = {
        "policy": outcome.policy,
        "since": outcome.since,
        "through": outcome.until - timedelta(days=1),
        "final_through": outcome.final_through,
        "lag": LAG_NOTE,
        "sources": [{"source": k, "lines": v} for k, v in outcome.lines.items()],
        "estimate_lines": outcome.estimates,
        "problems": problems,
    }
    if args.json:
        print_json(record)
    else:
        for k, v in outcome.lines.items():
            print(f"{k}: {v} cost lines stored")
        print(f"estimate: {outcome.estimates} lines for the same days")
        print(wrap(f"Final through {outcome.final_through}; {LAG_NOTE}."))
    for line in problems:
        say("error", line)
    return 1 if problems else 0


HEADERS = ("provider", "day", "type", "estimate $", "billed $", "gap $", "explained")


def run_reconcile(args: argparse.Namespace) -> int:
    from gpuplan.ledger import Ledger
    from gpuplan.usecases.audit.bill import LAG_NOTE, reconcile
    from gpuplan.usecases.policy import load_policy

    policy = load_policy(args.policy)
    with Ledger.open(args.db) as ledger:
        outcome = reconcile(policy, ledger, now=datetime.now(UTC), since=args.since)
    print_notices(outcome.notices)
    rows = [_record(r) for r in outcome.rows]
    if args.json:
        print_json({"policy": outcome.policy, "since": outcome.since,
                    "final_through": outcome.through, "lag": LAG_NOTE, "rows": rows,
                    "problems": outcome.problems})  # fmt: skip
    else:
        cells = [
            [
                r["provider"],
                str(r["day"]),
                r["instance_type"],
                format_cell(r["estimate_usd"], money=True),
                format_cell(r["billed_usd"], money=True),
                format_cell(r["gap_usd"], money=True),
                "; ".join(
                    f"{g['kind']} {format_cell(g['usd'], money=True)}: {g['detail']}"
                    for g in r["gaps"]
                ),
            ]
            for r in rows
        ]
        right = [False, False, False, True, True, True, False]
        print(render_table(HEADERS, cells, align_right=right, drop=(0,), wrap_last=True))
        print("\n" + wrap(f"Gap = estimate - billed (positive: the bill is lower). Final "
                          f"through {outcome.through}; {LAG_NOTE}."))  # fmt: skip
    for line in outcome.problems:
        say("error", line)
    return 1 if outcome.problems else 0


def _record(r: Any) -> dict[str, Any]:
    return {
        "provider": r.provider, "day": r.day, "instance_type": r.instance_type,
        "estimate_usd": r.estimate_usd, "estimate_hours": r.estimate_hours.quantize(_CENT),
        "billed_usd": r.billed_usd,
        "billed_hours": None if r.billed_hours is None else r.billed_hours.quantize(_CENT),
        "gap_usd": r.gap_usd,
        "gaps": [{"kind": g.kind, "usd": g.usd, "detail": g.detail} for g in r.gaps],
        "problem": r.problem or None,
    }  # fmt: skip


_CENT = Decimal("0.01")
