"""Options from a small hand-written catalog: placements, pricing models, limits, ranking."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuplan.core.catalog.offers import PricingModel, Provider
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.planner.constraints import PlanConstraints
from gpuplan.core.planner.options import Option, PlanRequest
from gpuplan.core.planner.ranking import Objective, pareto_flags, plan
from gpuplan.core.planner.workload import Workload, infer_shape

SEVEN_B = Workload(params=7e9, tokens=1e12, shape=infer_shape(7e9, seq_len=2048))
NO_CAP = 1e6
"""A deadline past any run here: 7B x 1T takes months on 8-16 GPUs, over the 90-day default,
and these tests are about placements and prices, not time."""


def _plan(catalog: Catalog, **kw: object) -> tuple[list[Option], list[Option]]:
    result = plan(catalog, PlanRequest(workload=SEVEN_B, **kw))  # type: ignore[arg-type]
    return list(result.options), list(result.infeasible)


def test_twelve_h100_on_8_gpu_instances_is_infeasible_with_that_reason(catalog: Catalog) -> None:
    options, infeasible = _plan(catalog, gpus=("H100",), counts=(12.0,))
    assert options == []
    assert any("not a whole number of p5.48xlarge" in r for o in infeasible for r in o.reasons)


def test_every_option_has_exactly_the_requested_gpus(catalog: Catalog) -> None:
    options, _ = _plan(catalog, gpus=("H100",), counts=(64.0,))
    assert options and all(o.gpu == "H100" and o.gpus == 64 and o.nodes == 8 for o in options)
    # us-east-1 sells all four models, eu-west-1 on-demand only.
    assert sorted(o.pricing or "" for o in options) == [
        "on_demand", "on_demand", "reserved_1y", "reserved_3y", "spot",
    ]  # fmt: skip


def test_single_gpu_instances_are_dominated_where_a_bigger_one_is_sold(catalog: Catalog) -> None:
    options, infeasible = _plan(catalog, gpus=("A100-80GB",), counts=(16.0,), deadline_hours=NO_CAP)
    assert {o.instance_type for o in options} == {"ND_A100_8", "a2-ultragpu-1g"}
    # a2-ultragpu-1g is the only A100 size in us-central1, so it stays.
    assert not any(o.instance_type == "a2-ultragpu-1g" for o in infeasible)


def test_unsold_gpu_gets_one_unpriced_option(catalog: Catalog) -> None:
    options, _ = _plan(catalog, gpus=("H800",), counts=(2048.0,))
    assert len(options) == 1
    only = options[0]
    assert only.provider is None and only.cost_usd is None and only.nodes == 256
    priced, _ = _plan(
        catalog,
        gpus=("H800",),
        counts=(16.0,),
        price_per_gpu_hour=Decimal("2"),
        deadline_hours=NO_CAP,
    )
    assert priced[0].hourly_usd == Decimal(32)
    assert priced[0].cost_usd == (Decimal(32) * Decimal(f"{priced[0].hours:.6f}")).quantize(
        Decimal("0.01")
    )


def test_spot_adds_interruption_time_and_says_so(catalog: Catalog) -> None:
    options, _ = _plan(catalog, gpus=("H100",), counts=(64.0,), regions=frozenset({"us-east-1"}))
    by = {o.pricing: o for o in options}
    spot, od = by["spot"], by["on_demand"]
    assert spot.spot is not None
    assert spot.hours == pytest.approx((od.hours or 0) * spot.spot.factor)
    # 8 nodes x 0.005 interruptions/instance-hour x (0.5 h + 0.25 h lost)
    assert spot.spot.factor == pytest.approx(1 + 8 * 0.005 * 0.75)
    assert any(n.startswith("spot: +") for n in spot.notes)


def test_reserved_charges_the_whole_term_unless_reused(catalog: Catalog) -> None:
    request = {"gpus": ("H100",), "counts": (64.0,), "regions": frozenset({"us-east-1"})}
    options, _ = _plan(catalog, **request)
    r1 = next(o for o in options if o.pricing == "reserved_1y")
    assert r1.commitment_usd == Decimal("38.00") * 8 * 365 * 24
    assert r1.cost_usd == r1.commitment_usd
    assert r1.hours is not None and r1.unused_term_hours == pytest.approx(365 * 24 - r1.hours)
    assert r1.break_even_utilization == pytest.approx(38.00 / 55.04)
    reused, _ = _plan(catalog, reuse_commitment=True, **request)
    r1b = next(o for o in reused if o.pricing == "reserved_1y")
    assert r1b.cost_usd == (Decimal(38 * 8) * Decimal(f"{r1b.hours:.6f}")).quantize(Decimal("0.01"))
    assert r1b.cost_usd is not None and r1b.cost_usd < r1.cost_usd
    assert r1b.unused_term_hours is None  # the capacity stays busy: nothing paid unused


def test_deadline_and_budget_make_options_infeasible(catalog: Catalog) -> None:
    options, infeasible = _plan(catalog, gpus=("H100",), counts=(8.0,), deadline_hours=24.0)
    assert options == []
    assert any("past the deadline" in r for o in infeasible for r in o.reasons)
    options, infeasible = _plan(catalog, gpus=("H100",), counts=(64.0,), budget_usd=Decimal(1))
    assert options == []
    assert any("over the budget" in r for o in infeasible for r in o.reasons)


def test_constraints_name_their_label(catalog: Catalog) -> None:
    limits = PlanConstraints(
        allowed_pricing=frozenset({PricingModel.ON_DEMAND}),
        max_hourly_usd=Decimal(100),
        label="policy research-team (policies/x.yaml)",
    )
    options, infeasible = _plan(
        catalog, gpus=("H100",), counts=(8.0, 64.0), constraints=limits, deadline_hours=NO_CAP
    )
    assert options and all(o.pricing == "on_demand" and o.gpus == 8 for o in options)
    reasons = [r for o in infeasible for r in o.reasons]
    assert "policy research-team (policies/x.yaml): spot not allowed" in reasons
    assert any(r.startswith("policy research-team") and "cap" in r for r in reasons)


def test_pareto_and_objectives(catalog: Catalog) -> None:
    result = plan(
        catalog,
        PlanRequest(workload=SEVEN_B, gpus=("H100",), counts=(8.0, 64.0, 256.0)),
        Objective.TIME,
    )
    hours = [o.hours or 0 for o in result.options]
    assert hours == sorted(hours)
    costs = plan(catalog, PlanRequest(workload=SEVEN_B, gpus=("H100",), counts=(8.0, 64.0)))
    priced = [float(o.cost_usd) for o in costs.options if o.cost_usd is not None]
    assert priced == sorted(priced)
    front = [o for o in result.options if o.pareto]
    assert front
    for o in front:  # nothing is both faster and cheaper than a frontier option
        assert not any(
            (p.hours or 0) < (o.hours or 0) and (p.cost_usd or 0) < (o.cost_usd or 0)
            for p in result.options
        )


def test_pareto_flags_on_a_tiny_table() -> None:
    def opt(hours: float, cost: int) -> Option:
        return Option("H100", 8, 1, 8, Provider.AWS, "x", "r", "on_demand",
                      hours=hours, cost_usd=Decimal(cost))  # fmt: skip

    flags = pareto_flags([opt(10, 100), opt(5, 200), opt(12, 150), opt(1, 1000), opt(5, 300)])
    assert flags == [True, True, False, True, False]


@given(st.lists(st.tuples(st.integers(1, 50), st.integers(1, 50)), min_size=1, max_size=12))
def test_pareto_flags_mark_exactly_the_undominated(points: list[tuple[int, int]]) -> None:
    options = [
        Option(
            "H100",
            8,
            1,
            8,
            Provider.AWS,
            "x",
            "r",
            "on_demand",
            hours=float(h),
            cost_usd=Decimal(c),
        )
        for h, c in points
    ]
    flags = pareto_flags(options)

    def dominated(h: int, c: int) -> bool:
        return any((h2 <= h and c2 < c) or (h2 < h and c2 <= c) for h2, c2 in points)

    for (h, c), flag in zip(points, flags, strict=True):
        if flag:
            assert not dominated(h, c)
        elif not dominated(h, c):
            # an identical point was flagged instead
            assert any(f and p == (h, c) for p, f in zip(points, flags, strict=True))
