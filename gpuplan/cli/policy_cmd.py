"""``gpuplan policy check FILE...`` and ``gpuplan policy show FILE``: no cloud is called."""

from __future__ import annotations

import argparse
import sys

from gpuplan.cli.output import say
from gpuplan.cli.render import print_json
from gpuplan.core.wording import plural, shown_line


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "policy",
        help="check and show policy files (budgets, planning limits, idle rules)",
        description="Validate policy files offline, or print one with its defaults.",
    )
    inner = p.add_subparsers(dest="policy_command", metavar="SUBCOMMAND", parser_class=type(p))
    inner.required = True

    check = inner.add_parser(
        "check",
        help="validate policy files; exit 2 on any error",
        description="Validate policy files without calling any cloud. Every error of a file "
        "is shown at once, each naming the file, line, column and key; settings the "
        "simulator shows are dangerous (threshold above 20%%, window under 30 min, "
        "coverage under 50%%) are warnings. Exit 0 when all pass (warnings included), "
        "2 otherwise.",
    )
    check.add_argument("files", nargs="+", metavar="FILE")
    check.add_argument("--json", action="store_true", help="print JSON")
    check.add_argument(
        "--db",
        metavar="PATH|URL",
        help="a ledger: warn when a schedule would have stopped instances that were busy in "
        "the last week of its history (read only; never created)",
    )
    check.set_defaults(handler=run_check)

    show = inner.add_parser(
        "show",
        help="print a policy with every default filled in",
        description="Print the effective policy: the file plus every default (YAML or JSON). "
        "Webhook URLs are shown redacted.",
    )
    show.add_argument("file", metavar="FILE")
    show.add_argument("--json", action="store_true", help="print JSON")
    show.set_defaults(handler=run_show)


def run_check(args: argparse.Namespace) -> int:
    from gpuplan.usecases.policy import check_policies

    results = check_policies(args.files)
    if args.db:
        from gpuplan.usecases.lifecycle.schedule_check import with_ledger_warnings

        results = with_ledger_warnings(results, args.db)
    failed = [r for r in results if not r.ok]
    if args.json:
        print_json(
            [
                {
                    "file": r.path,
                    "ok": r.ok,
                    "name": r.policy.name if r.policy else None,
                    "errors": list(r.problems),
                    "warnings": list(r.warnings),
                }
                for r in results
            ]
        )
    else:
        for r in results:
            if r.ok and r.policy is not None:
                print(shown_line(f"{r.path}: ok (policy {r.policy.name})"))
            for line in r.problems:
                say("error", line)
            for line in r.warnings:
                say("warning", line)
        if failed:
            print(
                f"{len(failed)} of {plural(len(results), 'policy file')} "
                + ("has errors" if len(failed) == 1 else "have errors"),
                file=sys.stderr,
            )
    return 2 if failed else 0


def run_show(args: argparse.Namespace) -> int:
    from gpuplan.usecases.policy import effective_policy, load_policy

    data = effective_policy(load_policy(args.file))
    if args.json:
        print_json(data)
        return 0
    import yaml

    print(shown_line(f"# effective policy from {args.file} (defaults filled in)"))
    print(yaml.safe_dump(data, sort_keys=False, default_flow_style=None), end="")
    return 0
