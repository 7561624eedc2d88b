"""``gpuplan audit``: where the dollars of GPU instances went, and what to change."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuplan.cli.common import (
    add_catalog_dir,
    add_concurrency,
    add_db,
    add_wide,
    concurrency_for,
    load_catalog_for,
)
from gpuplan.cli.output import say
from gpuplan.cli.render import print_csv, print_json, render_table, wrap
from gpuplan.core.audit.alerts import AlertStatus
from gpuplan.core.wording import shown_line

if TYPE_CHECKING:
    from gpuplan.core.audit.advice import InstanceAudit
    from gpuplan.core.catalog.query import Catalog
    from gpuplan.usecases.audit.usage import GroupAudit

CSV_COLUMNS = ("instance_id", "instance_type", "group", "hours", "paid_usd", "busy_usd",
               "waiting_usd", "idle_usd", "unknown_usd", "oversized_usd",
               "at_stake_usd_per_month", "advice")  # fmt: skip


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "audit",
        help="utilisation audit: dollars busy/waiting/idle/oversized, with advice",
        description=(
            "Splits each instance's paid dollars into busy (utilisation-weighted), waiting "
            "(a live process while GPUs wait), idle (nothing running) and unknown, prices "
            "the cheapest catalog offer that fits the observed peak, and prints advice "
            "with dollars per month at stake (docs/lifecycle.md)."
        ),
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--policy", metavar="FILE", help="audit the live fleet in this policy's scope"
    )
    source.add_argument(
        "--traces",
        metavar="DIR",
        help="trace folder (format v2, optional gpuN_utilisation columns)",
    )
    p.add_argument("--since", default="7d", help="live period: 7d, 24h, 2026-12-01 (7d)")
    p.add_argument("--by", metavar="KEY",
                   help="group by: account, label:NAME or class (the trace class); default: "
                   "class for --traces, account for --policy")  # fmt: skip
    p.add_argument("--period", type=int, default=None, metavar="MIN",
                   help="aggregation period in minutes (traces: 5, live: 60)")  # fmt: skip
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print JSON")
    out.add_argument("--csv", action="store_true", help="print CSV (one row per instance)")
    add_wide(p)
    add_concurrency(p)
    add_catalog_dir(p)
    add_db(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpuplan.core.audit.grouping import GroupKind, parse_group_by
    from gpuplan.core.audit.split import AuditRule
    from gpuplan.core.errors import InputError
    from gpuplan.usecases.audit import usage as uc
    from gpuplan.usecases.audit.exempt_report import exempt_line

    period = (5 if args.traces else 60) if args.period is None else args.period
    if not 1 <= period <= 60:
        raise InputError("--period: must be a whole number of minutes from 1 to 60")
    by = parse_group_by(args.by or ("class" if args.traces else "account"), tuple(GroupKind))
    catalog = load_catalog_for(args)
    status = 0
    exempt: dict[str, Any] | None = None
    if args.traces:
        traces = uc.load_trace_folder(Path(args.traces), catalog)
        audits = uc.audit_traces(traces, catalog, AuditRule(), period)
    else:
        audits, status, exempt = _live(args, catalog, period)
    records = [uc.record(a) for a in audits]
    groups = uc.groups(audits, by)
    if args.json:
        body = {"instances": records, "groups": [uc.group_record(g) for g in groups]}
        print_json(body if exempt is None else {**body, "exempt": exempt})
    elif args.csv:
        rows = [{**r, "advice": "; ".join(a["kind"] for a in r["advice"])} for r in records]
        print_csv(CSV_COLUMNS, rows)
    else:
        _print(records, groups)
        if exempt is not None and (line := exempt_line(exempt)):
            print(wrap(line))
    return status


def _live(
    args: argparse.Namespace, catalog: Catalog, period: int
) -> tuple[list[InstanceAudit], int, dict[str, Any]]:
    from datetime import UTC, datetime

    from gpuplan.core.audit.split import AuditRule
    from gpuplan.usecases.audit import live as live
    from gpuplan.usecases.audit.exempt_report import exempt_summary
    from gpuplan.usecases.audit.savings import parse_since
    from gpuplan.usecases.lifecycle.survey import idle_rule
    from gpuplan.usecases.policy import load_policy

    concurrency = concurrency_for(args)
    policy = load_policy(args.policy)
    now = datetime.now(UTC)
    start, end = live.aligned_window(parse_since(args.since, now), now, period)
    adapters, problems = live.build_adapters(policy, catalog)
    rule = AuditRule.from_idle(idle_rule(policy))  # the policy's meaning of idle
    result = live.audit_fleet(adapters, catalog, rule, policy.audit, start=start,
                              end=end, period_minutes=period,
                              concurrency=concurrency)  # fmt: skip
    problems += result.problems
    for line in result.skipped:
        print(f"gpuplan: skipped {shown_line(line)}", file=sys.stderr)
    if policy.audit.alerts:
        from gpuplan.ledger import Ledger
        from gpuplan.providers.webhook import notifier_for

        with Ledger.open(args.db) as ledger:  # the webhook as stop-idle builds it
            sent = live.send_alerts(policy, result.audits, ledger,
                                    notifier_for(policy.notify), now)  # fmt: skip
        for alert in sent:
            said = f"audit alert {alert.instance_id}: {alert.status} {alert.detail}"
            print(f"gpuplan: {shown_line(said)}", file=sys.stderr)
            if alert.status is AlertStatus.FAILED:
                problems.append(f"alert for {alert.instance_id} not sent: {alert.detail}")
    for line in problems:
        say("error", line)
    exempt = exempt_summary(result.listed, policy, now)
    return result.audits, 1 if problems else 0, exempt


def _money(value: object) -> str:
    return f"{float(str(value)):,.0f}"


def _print(records: list[dict[str, object]], groups: list[GroupAudit]) -> None:
    # paid = busy + waiting + idle + unknown: every part of the total is a column
    headers = ["instance", "type", "paid $", "busy $", "waiting $", "idle $", "unknown $",
               "oversized $", "$/month at stake", "advice"]  # fmt: skip
    rows = [
        [str(r["instance_id"]), str(r["instance_type"]),
         *(_money(r[k]) for k in ("paid_usd", "busy_usd", "waiting_usd", "idle_usd",
                                  "unknown_usd", "oversized_usd", "at_stake_usd_per_month")),
         ", ".join(str(a["kind"]) for a in r["advice"]) or "-"]  # type: ignore[attr-defined]
        for r in records
    ]  # fmt: skip
    # Left out first to fit the terminal: oversized $, type, then $/month at stake (each
    # instance's advice below repeats it). The parts of paid (busy, waiting, idle, unknown)
    # always stay: the total is the sum of what is shown.
    right = [False, False, *[True] * 7, False]
    print(render_table(headers, rows, align_right=right, drop=(7, 1, 8), wrap_last=True))
    print()
    gh = ["group", "instances", "paid $", "busy $", "waiting $", "idle $", "unknown $",
          "oversized $", "$/month at stake"]  # fmt: skip
    grows = [
        [g.name, str(g.instances), *(_money(v) for v in (g.paid, g.busy, g.waiting, g.idle,
                                                        g.unknown, g.oversized,
                                                        g.at_stake_per_month))]
        for g in groups
    ]  # fmt: skip
    # The group's $/month at stake goes after oversized $: the parts of paid stay.
    print(render_table(gh, grows, align_right=[False, *[True] * 8], drop=(7, 8)))
    print("\n" + wrap("paid = busy + waiting + idle + unknown (unknown: no GPU metrics, never "
                      "idle); oversized overlaps busy + waiting."))  # fmt: skip
    for r in records:
        for a in r["advice"]:  # type: ignore[attr-defined]
            print("\n" + wrap(f"{r['instance_id']}: {a['action']}", indent="  "))
            print(wrap(f"  evidence: {a['evidence']}", indent="    "))
            print(f"  at stake: ${_money(a['usd_per_month'])}/month")
