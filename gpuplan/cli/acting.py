"""What the acting commands (stop-idle, schedule) share: flags, run setup, report, exit code."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any

from gpuplan.cli.common import (
    add_catalog_dir,
    add_concurrency,
    add_db,
    add_shard,
    add_wide,
    wait_seconds,
)
from gpuplan.cli.output import say

if TYPE_CHECKING:
    from gpuplan.core.lifecycle.shard import Shard
    from gpuplan.core.policy import Policy
    from gpuplan.ledger import Ledger
    from gpuplan.usecases.clouds.adapters import Adapters
    from gpuplan.usecases.lifecycle.concurrency import Concurrency
    from gpuplan.usecases.lifecycle.stop_idle import StopIdleResult


def add_acting_flags(p: argparse.ArgumentParser, *, shard: bool) -> None:
    """``--policy``, ``--apply``, ``--json``, ``--wide``, ``--lock-wait``, ``--concurrency``,
    ``--db``, (with ``shard``) ``--shard``/``--shards`` and ``--catalog-dir``, in that order."""
    p.add_argument("--policy", required=True, metavar="FILE", help="policy file (YAML)")
    p.add_argument("--apply", action="store_true", help="act; without it nothing changes")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_wide(p)
    p.add_argument(
        "--lock-wait",
        type=wait_seconds,
        default=30.0,
        metavar="SECONDS",
        help="wait this long for a concurrent run to finish, then exit 1 (default 30)",
    )
    add_concurrency(p)
    add_db(p)
    if shard:
        add_shard(p)
    add_catalog_dir(p)


@contextmanager
def stop_requests() -> Iterator[list[int]]:
    """SIGTERM and Ctrl-C (SIGINT) are noted, not raised, while the run is open: the
    cloud call in flight finishes and is recorded, later instances are left alone.
    The list holds the signal numbers received."""
    received: list[int] = []

    def note(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)

    previous = {sig: signal.signal(sig, note) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextmanager
def acting_run(
    args: argparse.Namespace, policy: Policy, shard: Shard | None
) -> Iterator[tuple[Ledger, list[int], Adapters]]:
    """The catalog loaded, then the run session (lock and ledger) and the stop requests
    held while the block runs; yields the ledger, the signals received and every adapter
    of the policy."""
    import os

    from gpuplan.cli.common import load_catalog_for
    from gpuplan.usecases.clouds.adapters import build_adapters
    from gpuplan.usecases.lifecycle.session import run_session

    catalog = load_catalog_for(args)
    session = run_session(args.db, args.lock_wait, policy=policy.name, shard=shard)
    with session as ledger, stop_requests() as stopping:
        yield ledger, stopping, build_adapters(policy, catalog, os.environ)


def run_options(
    args: argparse.Namespace,
    policy: Policy,
    ledger: Ledger,
    fleet: Adapters,
    stopping: list[int],
    concurrency: Concurrency,
) -> dict[str, Any]:
    """The keyword arguments ``run_stop_idle`` and ``run_schedule`` share: apply, now,
    ledger, webhook, the fleet's problems, the stop requests, concurrency, progress."""
    from datetime import UTC, datetime

    from gpuplan.cli.common import scope_progress
    from gpuplan.providers.webhook import notifier_for

    return {
        "apply": args.apply,
        "now": datetime.now(UTC),
        "ledger": ledger,
        "notifier": notifier_for(policy.notify),
        "problems": fleet.problems,
        "should_stop": lambda: bool(stopping),
        "concurrency": concurrency,
        "on_scope": scope_progress(len(fleet.adapters)),
    }


def report_run(args: argparse.Namespace, record: dict[str, Any], result: StopIdleResult) -> None:
    """The run's plan (a table, or JSON with ``--json``) on stdout; its notices, problems
    and why it aborted on stderr."""
    from gpuplan.cli.render import print_json
    from gpuplan.cli.stop_idle_cmd import print_plan

    if args.json:
        print_json(record)
    else:
        print_plan(record)
    for line in result.notices:
        say("notice", line)
    for line in result.problems:
        say("error", line)
    if result.aborted:
        say("error", result.aborted)


def exit_code(result: StopIdleResult, stopping: list[int]) -> int:
    """128 + N when signal N stopped the run (said on stderr), else 1 when it failed, else 0."""
    if stopping:
        print(
            f"gpuplan: error: stopped by signal {stopping[0]}: the call in flight finished "
            "and was recorded; the rest was left alone",
            file=sys.stderr,
        )
        return 128 + stopping[0]
    return 1 if result.failed else 0
