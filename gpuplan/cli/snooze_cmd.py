"""``gpuplan snooze INSTANCE --for 4h --policy FILE``: keep one instance from being stopped.

Sets the ``gpuplan-snooze-until`` tag (``20261202t141500z``); ``stop-idle`` treats the
instance as exempt until then. A lifetime rule (``lifetimes:``: ``max_runtime``, the
expiry tag, ``stopped_for_days``) honours it only up to ``lifetimes.max_snooze`` past the
moment the rule fell due. ``--clear`` removes the tag.
"""

from __future__ import annotations

import argparse
import os
from datetime import UTC, datetime, timedelta

from gpuplan.cli.common import add_concurrency
from gpuplan.cli.render import print_json
from gpuplan.core.wording import shown_line


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "snooze",
        help="exempt one GPU instance from stop-idle for a while",
        description="Tag an instance gpuplan-snooze-until so stop-idle leaves it alone "
        "until then (lifetime rules: at most lifetimes.max_snooze past the moment they fell "
        "due). Exit 0 ok, 1 the cloud call failed, 2 bad input or unknown instance.",
    )
    p.add_argument("instance", metavar="INSTANCE", help="instance id, e.g. i-0abc...")
    p.add_argument("--policy", required=True, metavar="FILE", help="policy file (YAML)")
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument(
        "--for",
        dest="duration",
        metavar="DURATION",
        help="how long: a duration with its unit, e.g. 90m, 4h, 1h30m, 2d (at most 366d; a "
        "bare number is refused)",
    )
    group.add_argument("--clear", action="store_true", help="remove the snooze")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_concurrency(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpuplan.cli.common import concurrency_for
    from gpuplan.core.planner.quantities import parse_duration
    from gpuplan.usecases.clouds.adapters import build_adapters
    from gpuplan.usecases.lifecycle.survey import snooze
    from gpuplan.usecases.policy import load_policy

    concurrency = concurrency_for(args)
    until: datetime | None = None
    if not args.clear:
        hours = parse_duration(args.duration, "--for", max_hours=366 * 24)
        until = datetime.now(UTC) + timedelta(hours=hours)
    policy = load_policy(args.policy)
    fleet = build_adapters(policy, None, os.environ)
    found = snooze(fleet.adapters, args.instance, until, fleet.problems, concurrency=concurrency)
    record = {
        "instance_id": found.instance_id,
        "region": found.region,
        "snoozed_until": until,
    }
    if args.json:
        print_json(record)
    elif until is None:
        print(shown_line(f"{found.instance_id} ({found.region}): snooze removed"))
    else:
        print(
            shown_line(
                f"{found.instance_id} ({found.region}): snoozed until {until:%Y-%m-%d %H:%M}Z"
            )
        )
    return 0
