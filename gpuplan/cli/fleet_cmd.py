"""``gpuplan fleet --policy FILE``: GPU instances in scope with utilisation and verdicts.

Read-only: lists, fetches utilisation and decides exactly as ``stop-idle`` does, but
never plans or acts. Exit 0, or 1 when a scope could not be surveyed, 2 bad input.
"""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime
from typing import Any

from gpuplan.cli.common import (
    add_catalog_dir,
    add_concurrency,
    add_db,
    add_group_by,
    add_shard,
    add_wide,
)
from gpuplan.cli.output import say
from gpuplan.cli.render import format_cell, format_count, print_json, render_table, wrap
from gpuplan.cli.workload_table import print_workloads
from gpuplan.core.wording import plural


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "fleet",
        help="GPU instances in a policy's scope: utilisation, idle time, verdict, cost",
        description="List the GPU instances a policy governs with state, GPUs, $/h, GPU "
        "utilisation over the idle window (max and mean of the busiest GPU), how long "
        "they have been idle, the idle verdict and an estimated month-to-date cost.",
    )
    p.add_argument("--policy", metavar="FILE", help="policy file (YAML); needed without --report")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_wide(p)
    p.add_argument(
        "--report",
        action="store_true",
        help="idle GPU-hours and dollars per group from the ledger (same as `gpuplan waste`)",
    )
    p.add_argument("--since", default="7d", help="report period: 7d, 24h, 2026-12-01 (7d)")
    add_group_by(p)
    add_concurrency(p)
    add_db(p)
    add_shard(p)
    add_catalog_dir(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.report:
        from gpuplan.cli.waste_cmd import run as waste

        return waste(args)
    if not args.policy:
        from gpuplan.core.errors import InputError

        raise InputError("fleet: --policy FILE is required (or use --report)")
    from gpuplan.cli.common import concurrency_for, load_catalog_for, scope_progress
    from gpuplan.usecases.audit.exempt_report import exempt_line, exempt_summary
    from gpuplan.usecases.clouds.adapters import build_adapters
    from gpuplan.usecases.lifecycle.shard import resolve_shard, shard_fleet, shard_notice
    from gpuplan.usecases.lifecycle.survey import fleet_records, idle_rule, stranded_gpus, survey
    from gpuplan.usecases.policy import load_policy

    concurrency = concurrency_for(args)
    policy = load_policy(args.policy)
    shard = resolve_shard(args.shard, args.shards, os.environ)
    catalog = load_catalog_for(args)
    whole = build_adapters(policy, catalog, os.environ)
    fleet = shard_fleet(whole, shard)
    notice = shard_notice(whole, fleet, shard)
    if notice:
        say("notice", notice)
    problems = list(fleet.problems)
    now = datetime.now(UTC)
    seen = survey(
        fleet.adapters,
        idle_rule(policy),
        now,
        concurrency=concurrency,
        on_scope=scope_progress(len(fleet.adapters)),
    )
    problems.extend(seen.problems)
    records = fleet_records(seen, now, policy)
    exempt = exempt_summary([s.instance for s in seen.seen], policy, now)
    if args.json:
        shown = shard.label if shard else None
        record = {"policy": policy.name, "shard": shown, "instances": records,
                  "problems": problems, "exempt": exempt}  # fmt: skip
        spare = stranded_gpus(fleet.adapters)
        if spare:  # Kubernetes nodes' GPUs no pod requests; other clouds' JSON is unchanged
            record["stranded"] = spare
        print_json(record)
    else:
        _print(records)
        print_workloads(records)
        if line := exempt_line(exempt):
            print(wrap(line))
    for line in seen.notices:
        say("notice", line)
    for line in problems:
        say("error", line)
    return 1 if problems else 0


HEADERS = ("provider", "region", "instance", "type", "state", "GPUs", "$/h", "max %",
           "mean %", "GPU mem %", "CPU %", "idle min", "verdict", "MTD $",
           "reason")  # fmt: skip


DROP_ORDER = (10, 9, 8, 0, 3, 13, 4, 1)
"""Left out, in this order, to fit the terminal: CPU %, GPU memory %, mean %, provider,
instance type, MTD $, state, region. The instance id, GPUs, price, max %, idle minutes,
verdict and reason (wrapped) stay."""


def _skip(record: dict[str, Any]) -> str:
    skip = record.get("skip")
    return f"once idle, stop-idle skips it: {skip}" if skip else ""


def _print(records: list[dict[str, Any]]) -> None:
    rows = [
        [
            r["provider"],
            r["region"],
            r["instance_id"],
            r["instance_type"],
            r["state"],
            f"{format_count(r['gpu_count'])}x {r['gpu'] or '?'}",
            format_cell(r["hourly_usd"], money=True),
            format_cell(r["max_percent"], digits=1),
            format_cell(r["mean_percent"], digits=1),
            format_cell(r["gpu_memory_percent"], digits=0),
            format_cell(r["cpu_percent"], digits=0),
            format_cell(r["idle_minutes"]),
            r["verdict"],
            format_cell(r["month_to_date_usd"], money=True),
            "; ".join(x for x in (r["reason"], _skip(r)) if x),
        ]
        for r in records
    ]
    right = [False] * 5 + [False] + [True] * 6 + [False, True, False]
    print(render_table(HEADERS, rows, align_right=right, drop=DROP_ORDER, wrap_last=True))
    skipped = sum(1 for r in records if r.get("skip"))
    if skipped:
        print("\n" + wrap(f"{plural(skipped, 'running instance')} would be skipped by "
                          "stop-idle once idle (reason at the end of the row)."))  # fmt: skip
    print(
        "\n"
        + wrap(
            f"{plural(len(records), 'GPU instance')}. MTD $: running hours this month x list "
            "price (an estimate: stopped periods, disks and IPs are not counted). idle min: how "
            "long the GPUs have been quiet, read back as far as the live-process window (waste "
            "counts only time stop-idle runs saw idle; audit classes whole periods)."
        )
    )
