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

from gpuplan.cli.acting import acting_run, add_acting_flags, exit_code, report_run, run_options
from gpuplan.cli.output import say


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
    add_acting_flags(p, shard=False)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpuplan.cli.common import concurrency_for
    from gpuplan.usecases.lifecycle.schedule import run_schedule
    from gpuplan.usecases.lifecycle.stop_idle import result_record
    from gpuplan.usecases.policy import load_policy

    concurrency = concurrency_for(args)
    policy = load_policy(args.policy)
    if not policy.schedules.named:
        say("notice", f"policy {policy.name} defines no schedules: nothing is scheduled")
    with acting_run(args, policy, None) as (ledger, stopping, fleet):
        options = run_options(args, policy, ledger, fleet, stopping, concurrency)
        result = run_schedule(policy, fleet.adapters, **options)
    record = result_record(result)
    report_run(args, record, result)
    return exit_code(result, stopping)
