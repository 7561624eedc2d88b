"""``gpuplan restore WORKLOAD --policy FILE [--apply]``: undo a Kubernetes reclaim.

Scales a Deployment or StatefulSet back to the replica count gpuplan recorded on it,
resumes a suspended Job or CronJob, removes a Notebook's ``kubeflow-resource-stopped``.
Dry run by default (the API server's ``dryRun=All``). Exit 0 ok, 1 the call failed,
2 bad input.
"""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime

from gpuplan.cli.common import add_db
from gpuplan.cli.render import print_json
from gpuplan.core.wording import shown_line


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "restore",
        help="undo stop-idle on a Kubernetes workload (scale back, resume, start)",
        description="Bring back a workload stop-idle reclaimed: the replica count recorded "
        "on a Deployment/StatefulSet, a Job/CronJob's suspend, a Notebook's stop annotation. "
        "Dry run unless --apply. Exit 0 ok, 1 the call failed, 2 bad input.",
    )
    p.add_argument("workload", metavar="WORKLOAD", help="namespace/Kind/name, as fleet shows it")
    p.add_argument("--policy", required=True, metavar="FILE", help="policy file (YAML)")
    p.add_argument("--scope", metavar="CONTEXT", help="the kubeconfig context, when several")
    p.add_argument("--apply", action="store_true", help="restore (default: dry run)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_db(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpuplan.usecases.clouds.adapters import build_adapters
    from gpuplan.usecases.lifecycle.restore import pick, run_restore
    from gpuplan.usecases.lifecycle.session import run_session
    from gpuplan.usecases.policy import load_policy

    policy = load_policy(args.policy)
    fleet = build_adapters(policy, None, os.environ)
    adapter = pick(fleet.adapters, args.scope)
    # The policy's stop-idle lock: a restore never races a run acting on the same fleet.
    with run_session(args.db, 60.0, os.environ, policy=policy.name) as led:
        result = run_restore(
            policy.name, adapter, args.workload, apply=args.apply, now=datetime.now(UTC),
            ledger=led,
        )  # fmt: skip
    if args.json:
        print_json(
            {"workload": result.unit, "scope": result.scope, "dry_run": result.dry_run,
             "ok": result.ok, "detail": result.detail, "run_id": result.run_id}
        )  # fmt: skip
    else:
        print(shown_line(f"{result.unit} ({result.scope}): {result.detail}"))
    return 0 if result.ok else 1
