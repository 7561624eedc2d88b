"""Simulation use case: build the fleet (seeded or from a folder), replay the policy, sweep.

The replay clock starts at a fixed epoch: the simulation never reads the wall clock, so
the same inputs always give the same figures.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from gpuplan.core.catalog.offers import PricingModel
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.lifecycle.idle import IdleRule
from gpuplan.core.lifecycle.simulation.replay import ActionSettings, SimulationResult, simulate
from gpuplan.core.lifecycle.simulation.schedule_replay import ScheduleReplay, replay_schedule
from gpuplan.core.lifecycle.simulation.traces import (
    DEFAULT_TYPES,
    Trace,
    generate_fleet,
    workload_parts,
)
from gpuplan.core.policy import Policy
from gpuplan.core.policy.models import IdleAction, IdleSettings
from gpuplan.usecases.clouds.entries import trace_prices

EPOCH = datetime(2026, 1, 5, tzinfo=UTC)
SWEEP_WINDOWS = (30, 60, 90)
SWEEP_LIVE_WINDOWS = (60, 120, 150, 180, 240)
SWEEP_THRESHOLDS = (2.0, 5.0, 10.0)
SWEEP_INTERVALS = (10,)


def idle_rule(policy: Policy | None) -> IdleRule:
    """The idle rule of ``policy`` (the documented defaults when None).

    The policy's ``match_labels`` are dropped: simulated traces carry no labels, and the
    question is what the idle rule saves, not which instances are in scope.
    """
    if policy is None:
        return IdleRule()
    from gpuplan.usecases.lifecycle.survey import idle_rule as policy_rule

    return replace(policy_rule(policy), match_labels={})


def override(
    rule: IdleRule,
    *,
    window: int | None = None,
    threshold: float | None = None,
    live_window: int | None = None,
) -> IdleRule:
    """``rule`` with what-if values from the command line (None keeps the policy's)."""
    changes: dict[str, Any] = {}
    if window is not None:
        changes["window_minutes"] = window
    if threshold is not None:
        changes["threshold_percent"] = threshold
    if live_window is not None:
        changes["live_process_window_minutes"] = live_window
    out = replace(rule, **changes)
    if out.live_process_window_minutes < out.window_minutes:
        out = replace(out, live_process_window_minutes=out.window_minutes)
    return out


def action_settings(policy: Policy | None) -> ActionSettings:
    """What the replay honours of the policy's action settings."""
    idle = IdleSettings() if policy is None else policy.idle
    return ActionSettings(
        stops=idle.action is not IdleAction.NOTIFY,
        notice_minutes=idle.notice_minutes,
        max_actions_per_run=idle.max_actions_per_run,
        breaker_percent=idle.breaker_percent,
        breaker_min_actions=idle.breaker_min_actions,
    )


def catalog_prices(catalog: Catalog) -> Callable[[str], Decimal | None]:
    """On-demand price of an instance type in the simulator's price list
    (:func:`~gpuplan.usecases.clouds.entries.trace_prices`), else the lowest on-demand
    price the catalog has for that type anywhere."""
    at = trace_prices()
    home: dict[str, Decimal] = {}
    anywhere: dict[str, Decimal] = {}
    for o in catalog.offers:
        price = o.price(PricingModel.ON_DEMAND)
        if price is None:
            continue
        if o.provider is at.provider and o.region == at.region:
            home[o.instance_type] = price
        if o.instance_type not in anywhere or price < anywhere[o.instance_type]:
            anywhere[o.instance_type] = price

    def price_of(instance_type: str) -> Decimal | None:
        return home.get(instance_type) or anywhere.get(instance_type)

    return price_of


def seeded_fleet(catalog: Catalog, *, seed: int, instances: int, hours: int) -> list[Trace]:
    lookup = catalog_prices(catalog)
    prices: dict[str, Decimal] = {}
    for instance_type, _ in DEFAULT_TYPES:
        price = lookup(instance_type)
        if price is None:
            raise ValueError(
                f"the catalog has no {trace_prices().region} price for {instance_type}"
            )
        prices[instance_type] = price
    return generate_fleet(seed=seed, instances=instances, hours=hours, prices=prices)


def folder_fleet(directory: Path, catalog: Catalog, rule: IdleRule) -> list[Trace]:
    from gpuplan.loaders.traces import read_traces

    return read_traces(
        directory, price_of=catalog_prices(catalog), threshold=rule.threshold_percent
    )


def run(
    traces: list[Trace], rule: IdleRule, interval: int, actions: ActionSettings | None = None
) -> SimulationResult:
    return simulate(traces, rule=rule, interval_minutes=interval, epoch=EPOCH, actions=actions)


def sweep(
    traces: list[Trace],
    base: IdleRule,
    *,
    windows: Iterable[int] = SWEEP_WINDOWS,
    live_windows: Iterable[int] = SWEEP_LIVE_WINDOWS,
    thresholds: Iterable[float] = SWEEP_THRESHOLDS,
    intervals: Iterable[int] = SWEEP_INTERVALS,
    actions: ActionSettings | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[SimulationResult]:
    """Every (window, live-process window, threshold, interval) combination with the live
    window at least the window; ``progress(done, total)`` after each."""
    grid = [
        combo
        for combo in itertools.product(windows, live_windows, thresholds, intervals)
        if combo[1] >= combo[0]
    ]
    results: list[SimulationResult] = []
    for done, (window, live, threshold, interval) in enumerate(grid, start=1):
        rule = override(base, window=window, threshold=threshold, live_window=live)
        results.append(run(traces, rule, interval, actions))
        if progress is not None:
            progress(done, len(grid))
    return results


def result_record(result: SimulationResult) -> dict[str, Any]:
    """Plain data for --json and the results files."""
    by_class: dict[str, dict[str, Any]] = {}
    for t in result.traces:
        row = by_class.setdefault(
            t.trace_class,
            {"instances": 0, "saved_usd": Decimal(0), "window_oracle_usd": Decimal(0),
             "perfect_oracle_usd": Decimal(0), "false_stops": 0},
        )  # fmt: skip
        row["instances"] += 1
        row["saved_usd"] += t.usd(t.saved_minutes)
        row["window_oracle_usd"] += t.usd(t.window_oracle_minutes)
        row["perfect_oracle_usd"] += t.usd(t.perfect_oracle_minutes)
        row["false_stops"] += t.false_stops
    rule = result.rule
    record: dict[str, Any] = {
        "window_minutes": rule.window_minutes,
        "live_process_window_minutes": rule.live_process_window_minutes,
        "threshold_percent": rule.threshold_percent,
        "gpu_memory_floor_percent": rule.gpu_memory_floor_percent,
        "cpu_busy_percent": rule.cpu_busy_percent,
        "period_minutes": rule.period_minutes,
        "interval_minutes": result.interval_minutes,
        "action_stops": result.actions.stops,
        "notice_minutes": result.actions.notice_minutes,
        "max_actions_per_run": result.actions.max_actions_per_run,
        "breaker_percent": result.actions.breaker_percent,
        "breaker_min_actions": result.actions.breaker_min_actions,
        "aborted_runs": result.aborted_runs,
        "deferred_runs": result.deferred_runs,
        "deferrals": result.deferrals,
        "instances": len(result.traces),
        "stop_count": result.stops,
        "false_stops": result.false_stops,
        "harmful_stops": result.false_stops,
        "flag_count": result.flags,
        "saved_usd": round(result.saved_usd, 2),
        "window_oracle_usd": round(result.window_oracle_usd, 2),
        "perfect_oracle_usd": round(result.perfect_oracle_usd, 2),
        "share_of_window_oracle": _round(result.share_of(result.window_oracle_usd)),
        "share_of_perfect_oracle": _round(result.share_of(result.perfect_oracle_usd)),
        "disrupted_usd": round(result.disrupted_usd, 2),
        "by_class": {
            k: {
                **v,
                **{
                    f: round(v[f], 2)
                    for f in ("saved_usd", "window_oracle_usd", "perfect_oracle_usd")
                },
            }
            for k, v in sorted(by_class.items())
        },
    }
    if any(workload_parts(t.instance_id) for t in result.traces):
        record["by_namespace"] = workload_groups(result, lambda n, _k, _o: n)
        record["by_owner"] = workload_groups(result, lambda _n, k, o: f"{k}/{o}")
    return record


def workload_groups(
    result: SimulationResult, key: Callable[[str, str, str], str]
) -> dict[str, dict[str, Any]]:
    """Kubernetes workload units (``namespace/Kind/name``) grouped by ``key`` of their
    parts: units, dollars saved, the window oracle's dollars and harmful stops."""
    groups: dict[str, dict[str, Any]] = {}
    for t in result.traces:
        parts = workload_parts(t.instance_id)
        if parts is None:
            continue
        row = groups.setdefault(key(*parts), {"units": 0, "saved_usd": Decimal(0),
                                              "window_oracle_usd": Decimal(0),
                                              "false_stops": 0})  # fmt: skip
        row["units"] += 1
        row["saved_usd"] += t.usd(t.saved_minutes)
        row["window_oracle_usd"] += t.usd(t.window_oracle_minutes)
        row["false_stops"] += t.false_stops
    return {
        k: {**v, "saved_usd": round(v["saved_usd"], 2),
            "window_oracle_usd": round(v["window_oracle_usd"], 2)}
        for k, v in sorted(groups.items())
    }  # fmt: skip


def event_records(result: SimulationResult, *, flags: bool = False) -> list[dict[str, Any]]:
    """Every stop (or, for ``action: notify``, every flag) the replay made, in time order."""
    events = [
        {
            "instance_id": t.instance_id,
            "minute": e.minute,
            "reason": e.reason,
            "label": e.label,
            "harmful": e.false_stop,
        }
        for t in result.traces
        for e in (t.flags if flags else t.stops)
    ]
    return sorted(events, key=lambda e: (e["minute"], e["instance_id"]))


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def schedule_replays(traces: list[Trace], policy: Policy | None) -> list[ScheduleReplay]:
    """Each of the policy's schedules replayed over every trace from :data:`EPOCH` (a
    Monday, 00:00 UTC), as if every instance followed it."""
    if policy is None:
        return []
    return [
        replay_schedule(traces, name, schedule, EPOCH)
        for name, schedule in sorted(policy.schedules.named.items())
    ]


def schedule_record(replay: ScheduleReplay) -> dict[str, Any]:
    """Plain data for --json: dollars saved and work interrupted by one schedule."""
    return {
        "schedule": replay.name,
        "instances": len(replay.traces),
        "off_hours": round(replay.off_hours, 2),
        "saved_usd": round(replay.saved_usd, 2),
        "interrupted_busy_hours": round(replay.interrupted_hours, 2),
        "interrupted_usd": round(replay.interrupted_usd, 2),
        "busy_stretches_cut": replay.cut,
    }
