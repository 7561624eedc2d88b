"""``gpuplan budget --policy FILE``: estimated month-to-date spend, forecast and alerts."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from typing import Any

from gpuplan.cli.common import add_concurrency, add_db, add_wide, print_notices
from gpuplan.cli.output import say
from gpuplan.cli.render import format_cell, print_json, render_table, wrap
from gpuplan.core.audit.alerts import AlertStatus
from gpuplan.core.wording import plural, shown_line


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "budget",
        help="estimate month-to-date GPU spend in a policy's scope against its budget",
        description="Estimate month-to-date spend of the GPU instances in a policy's scope "
        "(billed hours this month x price), forecast the month at the current burn, record "
        "it in the ledger and send each budget alert once per month. Exit 0 ok, 1 when a "
        "provider or an alert failed, 2 bad input.",
    )
    p.add_argument("--policy", required=True, metavar="FILE", help="policy file (YAML)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--by",
        metavar="account|label:KEY",
        help="also a chargeback table per group: actual (from `gpuplan bill sync`), "
        "estimate and the difference",
    )
    add_wide(p)
    add_concurrency(p)
    add_db(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpuplan.cli.common import concurrency_for, load_catalog_for
    from gpuplan.core.audit.grouping import parse_group_by
    from gpuplan.ledger import Ledger
    from gpuplan.providers.webhook import notifier_for
    from gpuplan.usecases.audit.budget import budget_record, run_budget
    from gpuplan.usecases.clouds.adapters import default_registry
    from gpuplan.usecases.policy import load_policy

    concurrency = concurrency_for(args)
    by = None if args.by is None else parse_group_by(args.by)
    policy = load_policy(args.policy)
    catalog = load_catalog_for(args)
    with Ledger.open(args.db) as ledger:
        outcome = run_budget(
            policy,
            ledger=ledger,
            registry=default_registry(),
            environ=os.environ,
            now=datetime.now(UTC),
            notifier=notifier_for(policy.notify),
            catalog=catalog,
            concurrency=concurrency,
            by=by,
        )
        print_notices(str(row) for row in ledger.damaged)
    record = budget_record(outcome)
    if args.json:
        print_json(record)
    else:
        _print_table(record)
    for line in outcome.problems:
        say("error", line)
    for alert in outcome.alerts:
        if alert.status is AlertStatus.FAILED:
            print(
                f"gpuplan: error: alert at {alert.threshold_percent:g}% not sent: {alert.detail}",
                file=sys.stderr,
            )
    return 1 if outcome.failed else 0


HEADERS = ("provider", "region", "instance", "type", "state", "pricing", "hours", "$/h",
           "cost $", "note")  # fmt: skip
COLUMNS = ("provider", "region", "instance_id", "instance_type", "state", "pricing")
MONEY = ("actual_usd", "estimate_usd", "difference_usd")


def _print_table(record: dict[str, Any]) -> None:
    rows = [
        [str(i[c]) for c in COLUMNS]
        + [
            format_cell(i["hours"]),
            format_cell(i["hourly_usd"], money=True),
            format_cell(i["cost_usd"], money=True),
            str(i["note"]),
        ]
        for i in record["instances"]
    ]
    right = [False] * 6 + [True] * 3 + [False]
    # Left out first to fit the terminal: provider, state, type, region; the note wraps.
    print(render_table(HEADERS, rows, align_right=right, drop=(0, 4, 3, 1), wrap_last=True))
    print("\n" + shown_line(f"Policy {record['policy']}, {record['month']} (estimate):"))
    for line in _summary(record):
        print(wrap(f"  {line}", indent="    "))
    if record["chargeback"]:
        print()
        cells = [[c["group"], *(format_cell(c[k], money=True) for k in MONEY)]
                 for c in record["chargeback"]]  # fmt: skip
        print(render_table(("group", "actual $", "estimate $", "difference $"), cells,
                           align_right=[False, True, True, True]))  # fmt: skip
        print(wrap("Actual: the bill this month (`gpuplan bill sync`); estimate: list price "
                   "x hours seen. Lines without the label (discounts, shared commitments) "
                   "form their own group."))  # fmt: skip
    print(wrap("Cannot see: " + "; ".join(record["cannot_see"]) + "."))


def _summary(record: dict[str, Any]) -> list[str]:
    budget = record["monthly_usd"]
    spent = f"month to date   ${format_cell(record['month_to_date_usd'], money=True)}"
    forecast = f"forecast month  ${format_cell(record['forecast_usd'], money=True)}"
    if budget is None:
        spent += " (no monthly budget set)"
    else:
        spent += f" of ${format_cell(budget, money=True)} ({record['percent_used']}%)"
        forecast += f" ({record['percent_forecast']}% of budget)"
    lines = [spent]
    actual = record["actual"]
    if actual is not None:
        of = "" if actual["percent_used"] is None else f" ({actual['percent_used']}% of budget)"
        usd = {k: format_cell(actual[k], money=True)
               for k in ("month_to_date_usd", "billed_usd", "unbilled_estimate_usd")}  # fmt: skip
        lines.append(
            f"on actuals      ${usd['month_to_date_usd']}{of} = ${usd['billed_usd']} billed "
            f"through {actual['billed_through']} + ${usd['unbilled_estimate_usd']} estimated "
            "since; alerts use this"
        )
    lines.append(f"burn now        ${format_cell(record['burn_hourly_usd'], money=True)}/h")
    lines.append(forecast)
    for alert in record["alerts"]:
        detail = f" ({alert['detail']})" if alert["detail"] else ""
        lines.append(f"alert {alert['threshold_percent']:g}%: {alert['status']}{detail}")
    if record["unpriced"]:
        unpriced = plural(int(record["unpriced"]), "instance")
        lines.append(f"{unpriced} without a known price are not summed")
    if record["out_of_scope"]:
        outside = plural(int(record["out_of_scope"]), "instance")
        lines.append(f"{outside} listed but outside the policy's scope")
    if not record["recorded"]:
        lines.append("not recorded in the ledger: some providers could not be listed")
    return lines
