"""Recomputing only the layers a job needs (Megatron-LM's block recomputation).

When nothing fits without recomputation, the planner recomputes the fewest layers that make
the job fit and pays the 6N -> 8N forward repeat for those layers only; ``--recompute full``
still recomputes every layer.
"""

from __future__ import annotations

import json

import pytest

from gpuplan.cli.main import main as gpuplan
from gpuplan.core.planner.efficiency import recompute_factor
from gpuplan.core.planner.memory import MemoryPlan, choose_plan, estimate_memory
from gpuplan.core.planner.workload import (
    Method,
    Recompute,
    TrainingSetup,
    Workload,
    infer_shape,
)

LLAMA31_405B_8K = infer_shape(405e9, seq_len=8192, layers=126, hidden=16384, heads=128)


def _workload(**setup: object) -> Workload:
    return Workload(
        params=405e9,
        tokens=1e12,
        shape=LLAMA31_405B_8K,
        setup=TrainingSetup(**setup),  # type: ignore[arg-type]
    )


def test_the_fewest_recomputed_layers_that_fit_are_chosen() -> None:
    work = _workload()
    est = choose_plan(work, LLAMA31_405B_8K, 512, 8, 80, nvlink=True)
    layers = LLAMA31_405B_8K.layers
    k = est.plan.recomputed(layers)
    assert est.fits
    assert est.plan.recompute is Recompute.FULL
    assert 0 < k < layers
    # One layer fewer does not fit at that tensor-parallel size, and no recomputation
    # fits at any size tried.
    fewer = MemoryPlan(3, Recompute.FULL, est.plan.tensor_parallel, 1, k - 1)
    assert not estimate_memory(work, LLAMA31_405B_8K, 512, 80, fewer).fits
    for tp in (1, 2, 4, 8):
        plain = MemoryPlan(3, Recompute.NONE, tp, 1)
        assert not estimate_memory(work, LLAMA31_405B_8K, 512, 80, plain).fits
    assert est.recompute_text == f"full ({k} of {layers} layers)"


def test_memory_falls_layer_by_layer_between_none_and_full() -> None:
    work = _workload()
    shape = LLAMA31_405B_8K
    none = estimate_memory(work, shape, 512, 80, MemoryPlan(3, Recompute.NONE, 8, 1))
    full = estimate_memory(work, shape, 512, 80, MemoryPlan(3, Recompute.FULL, 8, 1))
    half = estimate_memory(work, shape, 512, 80, MemoryPlan(3, Recompute.FULL, 8, 1, 63))
    assert full.activations < half.activations < none.activations
    # Half the layers keep everything, half keep their input, plus one working set.
    s, h = shape.seq_len, shape.hidden
    layer, kept = 34 * s * h / 8, 2 * s * h / 8
    assert half.activations == pytest.approx(63 * kept + 63 * layer + layer)
    every = MemoryPlan(3, Recompute.FULL, 8, 1, shape.layers)
    assert estimate_memory(work, shape, 512, 80, every).activations == full.activations


def test_given_full_recompute_still_recomputes_every_layer() -> None:
    work = _workload(zero=3, recompute=Recompute.FULL)
    est = choose_plan(work, LLAMA31_405B_8K, 512, 8, 80, nvlink=True)
    assert est.plan.recomputed(LLAMA31_405B_8K.layers) == LLAMA31_405B_8K.layers
    assert est.recompute_text == "full"


def test_the_time_cost_scales_with_the_recomputed_share() -> None:
    assert recompute_factor(Method.PRETRAIN).value == pytest.approx(6 / 8)
    assert recompute_factor(Method.PRETRAIN, 0.5).value == pytest.approx(6 / 7)
    assert recompute_factor(Method.LORA).value == pytest.approx(4 / 6)
    assert (
        recompute_factor(Method.PRETRAIN, 0.25).value > recompute_factor(Method.PRETRAIN, 0.5).value
    )


def _cli(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, object]:
    argv = [
        "estimate", "--params", "405B", "--tokens", "1T", "--gpu", "H100", "--gpus", "512",
        "--seq-len", "8192", "--layers", "126", "--hidden", "16384", "--heads", "128",
        "--deadline", "3650d", "--json", *extra,
    ]  # fmt: skip
    assert gpuplan(argv) == 0
    record: dict[str, object] = json.loads(capsys.readouterr().out)
    return record


def test_cli_reports_the_recomputed_layers_and_charges_only_for_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    auto = _cli(capsys)["options"][0]  # type: ignore[index]
    full = _cli(capsys, "--zero", "3", "--recompute", "full")["options"][0]  # type: ignore[index]
    k = auto["memory"]["recompute_layers"]
    assert 0 < k < 126
    assert full["memory"]["recompute_layers"] == 126
    share = k / 126
    # Same GPUs, same work: the time differs by the recomputation factors alone.
    expected = (6 + 2) / (6 + 2 * share)
    assert full["hours"] / auto["hours"] == pytest.approx(expected, rel=0.01)
