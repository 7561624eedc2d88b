"""The central figure: the model averaged in log space with the 6ND rule of thumb."""

from __future__ import annotations

import math

import pytest

from gpuplan.core.catalog.gpus import GpuTable
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.planner import calibration as cal
from gpuplan.core.planner.central import central_factor, rule_of_thumb_ratio
from gpuplan.core.planner.explain import explain
from gpuplan.core.planner.options import DEFAULT_GOODPUT, Option, PlanRequest
from gpuplan.core.planner.ranking import plan
from gpuplan.core.planner.timing import Throughput
from gpuplan.core.planner.workload import Workload, infer_shape

NO_CAP = 1e6
SMALL = Workload(params=125e6, tokens=100e9, shape=infer_shape(125e6, seq_len=2048))
LARGE = Workload(params=70e9, tokens=1e12, shape=infer_shape(70e9, seq_len=4096))


def _on_demand(catalog: Catalog, request: PlanRequest) -> Option:
    options = plan(catalog, request).options
    return next(o for o in options if o.pricing in ("on_demand", None))


def _request(work: Workload, gpu: str, **extra: object) -> PlanRequest:
    return PlanRequest(
        workload=work,
        gpus=(gpu,),
        counts=(64.0,),
        deadline_hours=NO_CAP,
        **extra,  # type: ignore[arg-type]
    )


def _model_hours(option: Option) -> float:
    assert option.compute is not None
    return option.compute.compute_hours / DEFAULT_GOODPUT


def test_the_central_figure_is_the_geometric_mean_of_model_and_rule(catalog: Catalog) -> None:
    option = _on_demand(catalog, _request(LARGE, "H100"))
    assert option.compute is not None
    result = plan(catalog, _request(LARGE, "H100"))
    ratio = rule_of_thumb_ratio(option.compute.mfu, result.flops, cal.GOODPUT)
    assert ratio is not None
    model = _model_hours(option)
    rule = model * ratio
    spot = option.spot.factor if option.spot else 1.0
    assert option.hours == pytest.approx(math.sqrt(model * rule) * spot, rel=1e-9)
    assert option.rule_of_thumb_factor == pytest.approx(math.sqrt(ratio), rel=1e-9)
    # The rule by hand: 6ND at 40% of the peak, the GPU's and cluster's factors kept.
    factors = {f.name: f.value for f in option.compute.mfu.factors}
    kept = option.compute.mfu.mfu / (factors["base (steady state)"] * factors["model width"])
    by_hand = (
        result.flops.dense
        / (64 * option.compute.peak_tflops * 1e12 * cal.RULE_OF_THUMB_MFU * kept)
        / 3600
    )
    assert rule == pytest.approx(by_hand, rel=1e-9)


def test_small_models_move_more_towards_the_rule_than_large_ones(catalog: Catalog) -> None:
    """A narrow model's attention share and width factor are where labs depart most from
    the tables: the rule takes them out, so a 125M model moves more than a 70B one."""
    small = _on_demand(catalog, _request(SMALL, "H100"))
    large = _on_demand(catalog, _request(LARGE, "H100"))
    assert small.compute is not None and large.compute is not None
    small_factor = central_factor(small.compute.mfu, plan(catalog, _request(SMALL, "H100")).flops)
    large_factor = central_factor(large.compute.mfu, plan(catalog, _request(LARGE, "H100")).flops)
    assert small_factor < large_factor < 1.0
    assert small_factor < 0.85 and large_factor > 0.85


@pytest.mark.parametrize("work", [SMALL, LARGE])
def test_ratios_between_gpus_are_the_models(catalog: Catalog, work: Workload) -> None:
    """The rule keeps every GPU and cluster factor: at one count the central figures of two
    GPUs stand in the model's ratio (the generation ratios are untouched)."""
    pairs = [("A100-80GB", "H100"), ("H100", "B200"), ("H100", "H200")]
    compared = 0
    for a, b in pairs:
        first = _on_demand(catalog, _request(work, a))
        second = _on_demand(catalog, _request(work, b))
        assert first.gpu != second.gpu
        if first.nodes != second.nodes or first.gpus_per_node != second.gpus_per_node:
            continue
        central = (first.hours or 0) / (first.spot.factor if first.spot else 1.0)
        central /= (second.hours or 0) / (second.spot.factor if second.spot else 1.0)
        assert central == pytest.approx(_model_hours(first) / _model_hours(second), rel=1e-9)
        compared += 1
    assert compared >= 2


def test_a_stated_goodput_mfu_or_rate_stands_alone(catalog: Catalog, gpu_table: GpuTable) -> None:
    """--utilization, --mfu and --throughput replace what the rule hedges: no average."""
    given = _on_demand(catalog, _request(LARGE, "H100", goodput=0.5, goodput_given=True))
    assert given.compute is not None
    assert given.hours == pytest.approx(given.compute.compute_hours / 0.5, rel=1e-9)
    assert given.rule_of_thumb_factor == 1.0
    fixed = _on_demand(catalog, _request(LARGE, "H100", mfu=0.4))
    assert fixed.compute is not None
    assert fixed.hours == pytest.approx(_model_hours(fixed), rel=1e-9)
    measured = Throughput(3000.0, gpu_table.get("H100"))
    rate = _on_demand(catalog, _request(LARGE, "H100", throughput=measured))
    assert rate.compute is not None
    assert rate.hours == pytest.approx(_model_hours(rate), rel=1e-9)


def test_explain_prints_the_average(catalog: Catalog) -> None:
    result = plan(catalog, _request(LARGE, "H100"))
    option = next(o for o in result.options if o.pricing == "on_demand")
    text = "\n".join(explain(result, option))
    assert "central = model^0.5 x rule of thumb^0.5" in text
    given = plan(catalog, _request(LARGE, "H100", goodput=0.69, goodput_given=True))
    option = next(o for o in given.options if o.pricing == "on_demand")
    assert "rule of thumb" not in "\n".join(explain(given, option))


def test_the_json_range_names_the_first_way_to_narrow_it(
    catalog: Catalog, gpu_table: GpuTable
) -> None:
    """--throughput --measured-on is the first suggestion when the range is wide, on screen
    (calibration.range_summary) and in the JSON's range block; gone once the rate is the
    user's."""
    from gpuplan.core.planner.records import plan_record

    record = plan_record(plan(catalog, _request(LARGE, "H100")))
    assert record["range"]["narrow_first"] == cal.NARROW_FIRST
    assert 0.9 < record["options"][0]["rule_of_thumb_factor"] < 1.0
    assert cal.NARROW_FIRST.startswith("--throughput TOKENS_PER_S --measured-on GPU")
    assert cal.NARROW_FIRST in cal.range_summary(measured=False)[1]
    measured = Throughput(3000.0, gpu_table.get("H100"))
    record = plan_record(plan(catalog, _request(LARGE, "H100", throughput=measured)))
    assert record["range"]["narrow_first"] is None
    assert not any("--throughput" in line for line in cal.range_summary(measured=True))
