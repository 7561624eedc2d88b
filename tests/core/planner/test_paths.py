"""Other ways in: measured throughput, samples x FLOPs, goodput, fallbacks, explanations."""

from __future__ import annotations

import pytest

from gpuplan.core.catalog.gpus import GpuTable, Precision
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.planner.explain import explain
from gpuplan.core.planner.options import DEFAULT_GOODPUT, PlanRequest
from gpuplan.core.planner.ranking import plan
from gpuplan.core.planner.timing import Throughput
from gpuplan.core.planner.workload import TrainingSetup, Workload, infer_shape

SHAPE = infer_shape(7e9, seq_len=2048, layers=32, hidden=4096, heads=32, vocab=32000)
SEVEN_B = Workload(params=7e9, tokens=1e12, shape=SHAPE)
NO_CAP = 1e6
"""A deadline past any run here (7B x 1T on 8 GPUs takes months, over the 90-day default):
these tests are about rates, not time limits."""


def test_measured_throughput_sets_the_time_on_the_measured_gpu(
    catalog: Catalog, gpu_table: GpuTable
) -> None:
    measured = Throughput(3000.0, gpu_table.get("H100"))
    result = plan(
        catalog,
        PlanRequest(
            workload=SEVEN_B,
            gpus=("H100",),
            counts=(8.0,),
            throughput=measured,
            deadline_hours=NO_CAP,
        ),
    )
    option = next(o for o in result.options if o.pricing == "on_demand")
    # Measured on one node of the same GPU: nothing to move, time = tokens / (rate x GPUs)
    # / goodput.
    assert option.hours == pytest.approx(1e12 / (3000 * 8) / 3600 / DEFAULT_GOODPUT, rel=1e-6)
    assert option.mfu_factors[0].name.startswith("measured 3000 tokens/s/GPU on H100")


def test_memory_bound_measurement_scales_with_bandwidth(
    catalog: Catalog, gpu_table: GpuTable
) -> None:
    slow = Throughput(100.0, gpu_table.get("A100-80GB"))  # ~2% of peak: memory-bound
    # Decades at this rate: a deadline lets the planner list it (no count lists it alone).
    request = PlanRequest(
        workload=SEVEN_B, gpus=("H100",), counts=(8.0,), throughput=slow, deadline_hours=1e6
    )
    h100 = next(o for o in plan(catalog, request).options if o.pricing == "on_demand")
    ratio = (
        gpu_table.get("H100").memory_bandwidth_tbs / gpu_table.get("A100-80GB").memory_bandwidth_tbs
    )
    # Same node shape, NVLink 900 against 600 GB/s: the in-node link moves it a little.
    hours = 1e12 / (100 * ratio * 8) / 3600 / DEFAULT_GOODPUT
    assert h100.hours == pytest.approx(hours, rel=0.03)
    assert (h100.hours or 0) < hours


def test_samples_times_flops_per_sample(catalog: Catalog) -> None:
    work = Workload(samples=1e9, flops_per_sample=1e12)
    result = plan(catalog, PlanRequest(workload=work, gpus=("H100",), counts=(8.0,), mfu=0.5))
    option = next(o for o in result.options if o.pricing == "on_demand")
    assert result.flops.total == 1e21
    assert option.hours == pytest.approx(1e21 / (8 * 989.4e12 * 0.5) / 3600 / DEFAULT_GOODPUT)
    assert option.memory is None


def test_lower_goodput_stretches_time_and_cost(catalog: Catalog) -> None:
    base = {"workload": SEVEN_B, "gpus": ("H100",), "counts": (64.0,), "pricing": frozenset()}
    at90 = plan(catalog, PlanRequest(goodput=0.9, **base)).options  # type: ignore[arg-type]
    at60 = plan(catalog, PlanRequest(goodput=0.6, **base)).options  # type: ignore[arg-type]
    od90 = next(o for o in at90 if o.pricing == "on_demand" and o.region == "us-east-1")
    od60 = next(o for o in at60 if o.pricing == "on_demand" and o.region == "us-east-1")
    assert od60.hours == pytest.approx((od90.hours or 0) * 1.5)
    assert od60.cost_usd is not None and od90.cost_usd is not None
    assert float(od60.cost_usd) == pytest.approx(float(od90.cost_usd) * 1.5, rel=1e-4)


def test_fp8_on_a_gpu_without_it_falls_back_with_a_note(catalog: Catalog) -> None:
    work = Workload(
        params=7e9, tokens=1e12, shape=SHAPE, setup=TrainingSetup(precision=Precision.FP8)
    )
    request = PlanRequest(workload=work, gpus=("A100-80GB",), counts=(8.0,), deadline_hours=NO_CAP)
    result = plan(catalog, request)
    option = result.options[0]
    assert option.compute is not None and option.compute.precision_used is Precision.BF16
    assert any("no fp8 path" in n for n in option.notes)


def test_explain_prints_each_step(catalog: Catalog) -> None:
    request = PlanRequest(workload=SEVEN_B, gpus=("H100",), counts=(64.0,))
    result = plan(catalog, request)
    spot = next(o for o in result.options if o.pricing == "spot")
    reserved = next(o for o in result.options if o.pricing == "reserved_3y")
    text = "\n".join(explain(result, spot))
    needles = (
        "FLOPs dense = 6 x 7e+09", "MFU = ", "compute time = ", f"goodput {DEFAULT_GOODPUT:.2f}",
        "spot: x (1 + 0.04 interruptions/h", "GPU-hours = 64 x", "memory per GPU",
    )  # fmt: skip
    for needle in needles:
        assert needle in text, needle
    text = "\n".join(explain(result, reserved))
    assert "commitment = term x" in text and "whole 3-year term is charged" in text


def test_a_measurement_moves_to_another_generation_through_the_model(
    catalog: Catalog, gpu_table: GpuTable
) -> None:
    """--throughput on H100 planned on B200: the steady-state model's ratio, which is within
    15% of Megatron-Bridge's measured H100 -> B200 ratio (2.21x; anchors/cross_generation)."""
    measured = Throughput(3000.0, gpu_table.get("H100"))

    def hours(gpu: str) -> float:
        request = PlanRequest(
            workload=SEVEN_B,
            gpus=(gpu,),
            counts=(8.0,),
            throughput=measured,
            deadline_hours=NO_CAP,
        )
        options = plan(catalog, request).options  # B200 is unsold here: one unpriced option
        option = next(o for o in options if o.pricing in ("on_demand", None))
        assert option.hours is not None
        return option.hours

    ratio = hours("H100") / hours("B200")
    assert ratio == pytest.approx(2.21, rel=0.15)
    assert ratio != pytest.approx(2250 / 989.4, rel=0.001)  # not the bare peak ratio
