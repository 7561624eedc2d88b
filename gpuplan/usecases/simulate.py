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

from gpuplan.core.catalog import Catalog
from gpuplan.core.idle import IdleRule
from gpuplan.core.offers import PricingModel, Provider
from gpuplan.core.policy import Policy
from gpuplan.core.simulation.replay import SimulationResult, simulate
from gpuplan.core.simulation.traces import DEFAULT_TYPES, Trace, generate_fleet

EPOCH = datetime(2026, 1, 5, tzinfo=UTC)
PRICE_REGION = "us-east-1"
SWEEP_WINDOWS = (15, 30, 45, 60, 90, 120)
SWEEP_THRESHOLDS = (2.0, 5.0, 10.0)
SWEEP_INTERVALS = (5, 10, 15, 30)


def idle_rule(policy: Policy | None) -> IdleRule:
    """The idle rule of ``policy`` (the documented defaults when None).

    The policy's ``match_labels`` are dropped: simulated traces carry no labels, and the
    question is what the idle rule saves, not which instances are in scope.
    """
    if policy is None:
        return IdleRule()
    from gpuplan.usecases.fleet import idle_rule as policy_rule

    return replace(policy_rule(policy), match_labels={})


def catalog_prices(catalog: Catalog) -> Callable[[str], Decimal | None]:
    """On-demand AWS price of an instance type in us-east-1 (the simulator's price list)."""
    table = {
        o.instance_type: o.price(PricingModel.ON_DEMAND)
        for o in catalog.offers
        if o.provider is Provider.AWS and o.region == PRICE_REGION
    }
    return table.get


def seeded_fleet(catalog: Catalog, *, seed: int, instances: int, hours: int) -> list[Trace]:
    lookup = catalog_prices(catalog)
    prices: dict[str, Decimal] = {}
    for instance_type, _ in DEFAULT_TYPES:
        price = lookup(instance_type)
        if price is None:
            raise ValueError(f"the catalog has no {PRICE_REGION} price for {instance_type}")
        prices[instance_type] = price
    return generate_fleet(seed=seed, instances=instances, hours=hours, prices=prices)


def folder_fleet(directory: Path, catalog: Catalog, rule: IdleRule) -> list[Trace]:
    from gpuplan.loaders.traces import read_traces

    return read_traces(
        directory, price_of=catalog_prices(catalog), threshold=rule.threshold_percent
    )


def run(traces: list[Trace], rule: IdleRule, interval: int) -> SimulationResult:
    return simulate(traces, rule=rule, interval_minutes=interval, epoch=EPOCH)


def sweep(
    traces: list[Trace],
    base: IdleRule,
    *,
    windows: Iterable[int] = SWEEP_WINDOWS,
    thresholds: Iterable[float] = SWEEP_THRESHOLDS,
    intervals: Iterable[int] = SWEEP_INTERVALS,
    progress: Callable[[int, int], None] | None = None,
) -> list[SimulationResult]:
    """Every (window, threshold, interval) combination; ``progress(done, total)`` after each."""
    grid = list(itertools.product(windows, thresholds, intervals))
    results: list[SimulationResult] = []
    for done, (window, threshold, interval) in enumerate(grid, start=1):
        rule = replace(base, window_minutes=window, threshold_percent=threshold)
        results.append(run(traces, rule, interval))
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
    return {
        "window_minutes": result.rule.window_minutes,
        "threshold_percent": result.rule.threshold_percent,
        "period_minutes": result.rule.period_minutes,
        "interval_minutes": result.interval_minutes,
        "instances": len(result.traces),
        "stops": result.stops,
        "false_stops": result.false_stops,
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


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
