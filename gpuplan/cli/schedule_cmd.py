"""``gpuplan schedule --policy FILE [--apply]``: off-hours stops, on-hours starts.

Its own command rather than a ``stop-idle`` flag: the clock decides, not idleness (a busy
instance is stopped at off-hours, an idle one is left running in on-hours); it also
starts instances, which ``stop-idle`` never does; and its runs are their own kind in the
ledger (``schedule``), so that on-hours starts only what this job stopped, and
``savings``/``history`` of ``stop-idle`` stay what they were. Run it hourly (cron,
systemd timer, Kubernetes CronJob) beside ``stop-idle``; both take the policy's run lock.

Exit codes: 0 ok, 1 an action failed, a scope could not be surveyed, the breaker aborted
the run, another run held the lock; 2 bad input (the policy does not load: nothing is
done); 128 + N stopped by signal N after finishing and recording the call in flight.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime

from gpuplan.cli.common import add_catalog_dir, add_concurrency, add_db, add_wide, wait_seconds
from gpuplan.cli.output import say
from gpuplan.cli.render import print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "schedule",
        help="stop GPU instances at off-hours, start what it stopped at on-hours (dry run "
        "unless --apply)",
        description="Apply the policy's schedules: at off-hours stop the instances a schedule "
        "covers (busy or not; the idle action's data-loss guard, notice and cap apply); at "
        "on-hours start again only the instances this job stopped (from the ledger), never "
        "what a person stopped. An instance a person starts during off-hours is left running "
        "until the next off-hours unless enforce_off_hours: true. Exit 0 ok, 1 an action "
        "failed or the breaker aborted the run, 2 bad input.",
    )
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
    add_catalog_dir(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpuplan.cli.common import concurrency_for, load_catalog_for, scope_progress
    from gpuplan.cli.stop_idle_cmd import print_plan, stop_requests
    from gpuplan.providers.webhook import notifier_for
    from gpuplan.usecases.clouds.adapters import build_adapters
    from gpuplan.usecases.lifecycle.schedule import run_schedule
    from gpuplan.usecases.lifecycle.session import run_session
    from gpuplan.usecases.lifecycle.stop_idle import result_record
    from gpuplan.usecases.policy import load_policy

    concurrency = concurrency_for(args)
    policy = load_policy(args.policy)
    if not policy.schedules.named:
        say("notice", f"policy {policy.name} defines no schedules: nothing is scheduled")
    catalog = load_catalog_for(args)
    session = run_session(args.db, args.lock_wait, policy=policy.name, shard=None)
    with session as ledger, stop_requests() as stopping:
        fleet = build_adapters(policy, catalog, os.environ)
        result = run_schedule(
            policy,
            fleet.adapters,
            apply=args.apply,
            now=datetime.now(UTC),
            ledger=ledger,
            notifier=notifier_for(policy.notify),
            problems=fleet.problems,
            should_stop=lambda: bool(stopping),
            concurrency=concurrency,
            on_scope=scope_progress(len(fleet.adapters)),
        )
    record = result_record(result)
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
    if stopping:
        print(
            f"gpuplan: error: stopped by signal {stopping[0]}: the call in flight finished "
            "and was recorded; the rest was left alone",
            file=sys.stderr,
        )
        return 128 + stopping[0]
    return 1 if result.failed else 0
