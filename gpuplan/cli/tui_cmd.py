"""``gpuplan tui``: the interactive terminal UI (Textual), loaded only by this handler."""

from __future__ import annotations

import argparse

from gpuplan.cli.common import add_catalog_dir, add_concurrency, add_db


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "tui",
        help="interactive terminal UI: catalog, estimate, fleet, policies",
        description="Browse prices, plan a job, watch the fleet and stop idle instances, "
        "with the keyboard (? for help, q to quit). Catalog and Estimate need no network.",
    )
    p.add_argument(
        "--policies",
        metavar="DIR",
        default="policies",
        help="folder of policy files for the Policies and Fleet screens (default: ./policies)",
    )
    p.add_argument("--policy", metavar="FILE", help="open this policy file first")
    add_concurrency(p)
    add_db(p)
    add_catalog_dir(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from gpuplan.core.errors import InputError
    from gpuplan.core.urls import is_postgres_dsn, redact_dsn

    db = args.db or os.environ.get("GPUPLAN_DB")
    if is_postgres_dsn(db):
        # The TUI keeps its ledger in a local file; shards share PostgreSQL, not screens.
        raise InputError(f"{redact_dsn(db or '')}: the TUI needs a ledger file; use --db PATH here")
    from gpuplan.cli.common import concurrency_for
    from gpuplan.tui.app import run_tui

    return run_tui(
        catalog_dir=args.catalog_dir,
        policies_dir=Path(args.policies),
        policy_file=Path(args.policy) if args.policy else None,
        ledger_path=Path(args.db) if args.db else None,
        concurrency=concurrency_for(args),
    )
