"""``gpuplan stop-idle --policy FILE [--apply]``: plan (dry run by default) and act.

Exit codes, for monitoring a scheduled job: 0 all good (unknown verdicts are reported,
not failures; instances past ``max_actions_per_run`` are deferred to the next run), 1
some action failed, a scope could not be surveyed, a re-check could not be made, the
circuit breaker aborted the run (more would-be actions than ``breaker_percent`` of the
running GPU instances), another run held the lock or the ledger could not be written, 2
bad input (the policy does not load: nothing is stopped; a bad ``--shard``), 128 + N
stopped by signal N (SIGTERM 143, Ctrl-C 130) after finishing and recording the call in flight.

``--shard INDEX/COUNT`` (or a Kubernetes Indexed Job's ``JOB_COMPLETION_INDEX`` with
``GPUPLAN_SHARDS``) narrows the run to the scopes that shard owns; the run lock is then
per policy and shard, and the shard is recorded with the run.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from gpuplan.cli.acting import acting_run, add_acting_flags, exit_code, report_run, run_options
from gpuplan.cli.output import say
from gpuplan.cli.render import format_cell, render_table, wrap
from gpuplan.cli.workload_table import print_workloads
from gpuplan.core.wording import plural


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "stop-idle",
        help="find idle GPU instances and stop them (dry run unless --apply)",
        description="Survey the GPU instances a policy governs, decide which are idle, and "
        "print the plan. With --apply, re-check each right before acting and stop "
        "(hibernate, terminate) the ones still idle, at most max_actions_per_run a run (the "
        "rest deferred). Exit 0 ok, 1 an action failed or the circuit breaker aborted the "
        "run, 2 bad input.",
    )
    add_acting_flags(p, shard=True)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpuplan.cli.common import concurrency_for
    from gpuplan.usecases.lifecycle.owner_notices import OwnerNotifier
    from gpuplan.usecases.lifecycle.shard import resolve_shard, shard_fleet, shard_notice
    from gpuplan.usecases.lifecycle.stop_idle import data_loss_skips, result_record, run_stop_idle
    from gpuplan.usecases.policy import load_policy

    concurrency = concurrency_for(args)
    policy = load_policy(args.policy)
    shard = resolve_shard(args.shard, args.shards, os.environ)
    with acting_run(args, policy, shard) as (ledger, stopping, whole):
        fleet = shard_fleet(whole, shard)
        notice = shard_notice(whole, fleet, shard)
        if notice:
            say("notice", notice)
        options = run_options(args, policy, ledger, fleet, stopping, concurrency)
        owners = OwnerNotifier.of(policy, os.environ)
        result = run_stop_idle(policy, fleet.adapters, owners=owners, **options)
    record = {**result_record(result), "shard": shard.label if shard else None}
    report_run(args, record, result)
    lost = data_loss_skips(result)
    if args.apply and lost and not result.aborted:
        print(
            f"gpuplan: notice: {plural(len(lost), 'idle instance')} left running: the action "
            "would erase local disks and the policy has allow_data_loss: false",
            file=sys.stderr,
        )
    return exit_code(result, stopping)


HEADERS = ("region", "instance", "type", "state", "$/h", "verdict", "plan", "action", "reason")


def print_plan(record: dict[str, Any]) -> None:
    rows = [
        [
            d["region"],
            d["instance_id"],
            d["instance_type"],
            d["state"],
            format_cell(d["hourly_usd"], money=True),
            d["verdict"],
            d["planned_action"],
            d["action"],
            "; ".join(x for x in (d["reason"], d["detail"], *d["warnings"]) if x),
        ]
        for d in record["decisions"]
    ]
    right = [False] * 4 + [True] + [False] * 4
    # Left out first to fit the terminal: type, state, region; the reason wraps.
    print(render_table(HEADERS, rows, align_right=right, drop=(2, 3, 0), wrap_last=True))
    print_workloads(record["decisions"])
    mode = "dry run: nothing was changed (use --apply to act)" if record["dry_run"] else "applied"
    print("\n" + wrap(f"Policy {record['policy']}, {mode}. {_counts(record) or 'No instances'}."))
    for n in record.get("owner_notices", []):
        told = ", ".join(n["channels"]) or "nowhere"
        print(wrap(f"Owner {n['owner'] or '(none)'} of {n['instance_id']} ({n['rule']}): "
                   f"{n['state']} ({told})"))  # fmt: skip
    for r in record.get("reconciled", []):  # a killed run's intents (ids it made included)
        print(wrap(f"Reconciled {r['instance_id']} ({r['action']}): {r['outcome']}: {r['detail']}"))


def _counts(record: dict[str, Any]) -> str:
    """``Verdicts: 3 busy, 4 idle; planned: 1 stop; deferred: 1 (action cap); skipped: 2
    (data loss: 2); done: 1 stopped`` (empty parts left out): what is skipped or deferred
    is never counted as planned or done."""
    from collections import Counter

    decisions = record["decisions"]
    skips = Counter(d["skip"] for d in decisions if d["skip"])
    deferred = sum(1 for d in decisions if d["step"] == "defer")
    parts = [
        _part("Verdicts", Counter(d["verdict"] for d in decisions)),
        _part("planned", Counter(d["planned_action"] for d in decisions if d["step"] in _PLANNED)),
        f"deferred: {deferred} (action cap)" if deferred else "",
        f"skipped: {skips.total()} ({_part('', skips)[2:]})" if skips else "",
        _part("done", Counter(d["action"] for d in decisions if d["action"] not in _NOT_DONE)),
    ]
    return "; ".join(p for p in parts if p)


def _part(label: str, counts: Any) -> str:
    if not counts:
        return ""
    return f"{label}: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))


_PLANNED = frozenset({"act", "mark", "wait", "notify"})
_NOT_DONE = frozenset({"none", "skipped", "deferred"})
