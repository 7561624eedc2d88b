"""``gpuplan simulate``: replay an idle policy over utilisation traces against oracles."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuplan.cli.common import add_catalog_dir, add_wide, load_catalog_for
from gpuplan.cli.render import plural, print_json, render_table, wrap

if TYPE_CHECKING:
    from gpuplan.core.lifecycle.simulation.replay import SimulationResult
    from gpuplan.core.lifecycle.simulation.traces import Trace


MAX_INSTANCE_HOURS = 50_000
"""About half a minute of replay on one core; more is a typo, not a fleet to simulate."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "simulate",
        help="replay an idle policy over utilisation traces: dollars saved vs oracles",
        description=(
            "Replays the scheduled stop-idle job over a fleet's utilisation traces and "
            "reports dollars saved against the window oracle and the perfect oracle, and "
            "false stops. Without --traces a seeded fleet is generated (docs/simulation.md)."
        ),
    )
    p.add_argument("--policy", metavar="FILE", help="policy file whose idle: section is replayed")
    p.add_argument("--traces", metavar="DIR", help="trace folder (fleet.csv + one CSV each)")
    p.add_argument("--seed", type=int, default=7, help="seed of the generated fleet (default 7)")
    p.add_argument("--instances", type=int, default=60, help="generated instances (default 60)")
    p.add_argument("--hours", type=int, default=72, help="generated hours (default 72)")
    p.add_argument(
        "--interval",
        type=int,
        default=10,
        help="minutes between scheduled runs (default 10, as deploy/crontab)",
    )
    p.add_argument("--window", type=int, metavar="MIN", help="what-if: idle window_minutes")
    p.add_argument("--threshold", type=float, metavar="PCT", help="what-if: idle threshold_percent")
    p.add_argument(
        "--live-window",
        type=int,
        metavar="MIN",
        help="what-if: live_process_window_minutes (GPU memory held or CPU busy)",
    )
    p.add_argument(
        "--sweep",
        action="store_true",
        help="sweep window x live-process window x threshold",
    )
    p.add_argument("--write-traces", metavar="DIR", help="write the generated fleet to DIR")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_wide(p)
    add_catalog_dir(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpuplan.core.errors import InputError
    from gpuplan.usecases.lifecycle import simulate as uc

    limits = {"instances": 10_000, "hours": 24 * 366, "interval": 24 * 60}
    for flag in ("instances", "hours", "interval", "window", "live_window"):
        value, most = getattr(args, flag), limits.get(flag, 100_000)
        if value is not None and not 0 < value <= most:
            name = flag.replace("_", "-")
            raise InputError(f"--{name}: must be a whole number from 1 to {most}")
    if args.threshold is not None and not 0 < args.threshold <= 100:
        raise InputError("--threshold: must be a percent above 0 and at most 100")
    if args.instances * args.hours > MAX_INSTANCE_HOURS:
        raise InputError(
            f"--instances x --hours: at most {MAX_INSTANCE_HOURS:,} instance-hours "
            f"(a minute-by-minute replay), got {args.instances * args.hours:,}"
        )
    policy = None
    if args.policy:
        from gpuplan.usecases.policy import load_policy

        policy = load_policy(args.policy)
    rule = uc.override(
        uc.idle_rule(policy),
        window=args.window,
        threshold=args.threshold,
        live_window=args.live_window,
    )
    actions = uc.action_settings(policy)
    catalog = load_catalog_for(args)
    if args.traces:
        traces = uc.folder_fleet(Path(args.traces), catalog, rule)
    else:
        traces = uc.seeded_fleet(
            catalog, seed=args.seed, instances=args.instances, hours=args.hours
        )
    if args.write_traces:
        from gpuplan.loaders.traces import write_traces

        write_traces(Path(args.write_traces), traces)
    if args.sweep:
        results = uc.sweep(traces, rule, actions=actions, progress=_progress)
    else:
        results = [uc.run(traces, rule, args.interval, actions)]
    records = [uc.result_record(r) for r in results]
    scheduled = [uc.schedule_record(r) for r in uc.schedule_replays(traces, policy)]
    if args.json:
        if args.sweep:
            print_json(records)
        else:
            flags = uc.event_records(results[0], flags=True)
            events = {"stops": uc.event_records(results[0]), "flags": flags}
            print_json({**records[0], **events, "schedules": scheduled})
    else:
        _print_table(results)
        _print_spend(traces)
        if not args.sweep:
            _print_workloads(records[0])
        _print_schedules(scheduled)
    return 0


def _print_workloads(record: dict[str, Any]) -> None:
    """Kubernetes workload units replayed, by namespace then by owner (Kind/name)."""
    for field, title in (("by_namespace", "namespace"), ("by_owner", "owner")):
        groups = record.get(field)
        if not groups:
            return
        headers = [title, "units", "saved $", "window oracle $", "harmful stops"]
        rows = [[k, str(v["units"]), f"{v['saved_usd']:,.2f}", f"{v['window_oracle_usd']:,.2f}",
                 str(v["false_stops"])] for k, v in groups.items()]  # fmt: skip
        print(f"\nKubernetes workloads by {title}:")
        print(render_table(headers, rows, align_right=[False] + [True] * 4))


def _print_schedules(scheduled: list[dict[str, object]]) -> None:
    """The policy's schedules replayed: dollars saved and the busy work they stop."""
    if not scheduled:
        return
    headers = ["schedule", "off h", "saved $", "busy h stopped", "busy $ stopped", "stretches cut"]
    rows = [
        [
            str(s["schedule"]),
            f"{s['off_hours']:,.0f}",
            f"{s['saved_usd']:,.0f}",
            f"{s['interrupted_busy_hours']:,.1f}",
            f"{s['interrupted_usd']:,.0f}",
            str(s["busy_stretches_cut"]),
        ]
        for s in scheduled
    ]
    print("\n" + render_table(headers, rows, align_right=[False] + [True] * 5))
    print(
        wrap(
            "Schedules, each as if every instance followed it from Monday 00:00 UTC: saved $ "
            "is every off-hours hour at its price; busy h stopped is work interrupted (busy-"
            "labelled minutes in off-hours); stretches cut counts busy-labelled stretches "
            "that off-hours cut into."
        )
    )


def _print_spend(traces: Sequence[Trace]) -> None:
    """What the savings are out of: the period and what the fleet cost without stopping."""
    from decimal import Decimal

    hours = max((t.minutes for t in traces), default=0) / 60
    spend = sum((t.hourly_usd * t.minutes / 60 for t in traces), Decimal(0))
    print(
        wrap(
            f"Period: {hours:,.0f} h per instance; spend without stopping: ${spend:,.0f} "
            "(saved $ is out of this)."
        )
    )


def _progress(done: int, total: int) -> None:
    """Progress of a sweep on stderr, only when stderr is a terminal (not in logs/pipes)."""
    if not sys.stderr.isatty():
        return
    end = "\n" if done == total else ""
    print(f"\rsimulating {done}/{total}", end=end, file=sys.stderr, flush=True)


def _print_table(results: list[SimulationResult]) -> None:
    headers = ["window", "live", "thresh %", "every", "stops", "harmful", "saved $",
               "window oracle $", "% of window", "perfect oracle $", "% of perfect"]  # fmt: skip
    rows = [
        [
            f"{r.rule.window_minutes}m",
            f"{r.rule.live_process_window_minutes}m",
            f"{r.rule.threshold_percent:g}",
            f"{r.interval_minutes}m",
            str(r.stops),
            str(r.false_stops),
            f"{r.saved_usd:,.0f}",
            f"{r.window_oracle_usd:,.0f}",
            _pct(r.share_of(r.window_oracle_usd)),
            f"{r.perfect_oracle_usd:,.0f}",
            _pct(r.share_of(r.perfect_oracle_usd)),
        ]
        for r in results
    ]
    # The oracles' dollars go first (their shares say how close), then the window's share.
    drop = (7, 9, 8, 1)
    print(render_table(headers, rows, align_right=[True] * len(headers), drop=drop))
    first = results[0]
    print(
        "\n"
        + wrap(
            f"{plural(len(first.traces), 'instance')}; a harmful stop is a stop inside a "
            "busy-labelled stretch (a live session, its pauses included)."
        )
    )
    if not first.actions.stops:
        print(wrap(f"action: notify stops nothing and saves nothing; it would flag {first.flags}."))
    acts = first.actions
    print(
        wrap(
            f"Cap: {plural(first.deferred_runs, 'scheduled run')} reached max_actions_per_run "
            f"= {acts.max_actions_per_run} and deferred {first.deferrals} stops to a later "
            f"run. Breaker: {plural(first.aborted_runs, 'scheduled run')} aborted (more than "
            f"{acts.breaker_percent:g}% of the running instances due, at least "
            f"{acts.breaker_min_actions})."
        )
    )


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"
