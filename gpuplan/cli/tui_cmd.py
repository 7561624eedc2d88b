"""``gpuplan tui``: the interactive terminal UI (Textual), loaded only by this handler."""

from __future__ import annotations

import argparse
from pathlib import Path

from gpuplan.cli.common import add_catalog_dir, add_concurrency, add_db

DEFAULT_POLICIES = "policies"


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
        default=DEFAULT_POLICIES,
        help="folder of policy files for the Policies and Fleet screens (default: ./policies)",
    )
    p.add_argument("--policy", metavar="FILE", help="open this policy file first")
    add_concurrency(p)
    add_db(p)
    add_catalog_dir(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gpuplan.cli.common import check_catalog_env, concurrency_for

    check_catalog_env()
    ledger = _check_ledger(args.db)
    _check_policies(args.policies, args.policy, args.catalog_dir)
    concurrency = concurrency_for(args)
    from gpuplan.usecases.clouds.extras import needs_extra

    with needs_extra("gpuplan tui"):
        from gpuplan.tui.app import run_tui

    return run_tui(
        catalog_dir=args.catalog_dir,
        policies_dir=Path(args.policies),
        policy_file=Path(args.policy) if args.policy else None,
        ledger_path=ledger,
        concurrency=concurrency,
    )


def _check_ledger(db: str | None) -> Path | None:
    """The ledger file the TUI may open, checked before the screen opens (exit 2 with one
    line, not an error inside the UI): a PostgreSQL URL, a libpq keyword string, a folder,
    or a file in a folder that does not exist is refused."""
    import os
    from pathlib import Path

    from gpuplan.core.errors import InputError
    from gpuplan.core.urls import is_postgres_dsn, redact_dsn

    given = db or os.environ.get("GPUPLAN_DB")
    flag = "--db" if db else "GPUPLAN_DB"
    if not given:
        return None
    if is_postgres_dsn(given):
        # The TUI keeps its ledger in a local file; shards share PostgreSQL, not screens.
        raise InputError(f"{flag} {redact_dsn(given)}: the TUI needs a ledger file; use --db PATH")
    if "=" in given and " " in given.strip():
        raise InputError(f"{flag}: a connection string (key=value ...); the TUI needs a file")
    path = Path(given)
    if path.is_dir():
        raise InputError(f"{flag} {given!r}: a folder; expected a ledger file")
    if not path.parent.is_dir():
        raise InputError(f"{flag} {given!r}: the folder {str(path.parent)!r} does not exist")
    return path if db else None


def _check_policies(folder: str, policy: str | None, catalog_dir: str | None) -> None:
    """``--policies`` is a folder (the default ``./policies`` may be missing) and
    ``--policy`` a policy file that loads; else InputError naming the flag."""
    import os

    from gpuplan.core.errors import InputError

    if folder != DEFAULT_POLICIES and not os.path.isdir(folder):
        raise InputError(f"--policies {folder!r}: not an existing folder")
    if policy is not None:
        from gpuplan.usecases.policy import gpu_table, load_policy

        load_policy(policy, gpus=gpu_table(catalog_dir))
