"""FLOPs, the MFU model and memory fit, against hand arithmetic and the issue's figures."""

from __future__ import annotations

from typing import Any

import pytest

from gpuplan.core.catalog.gpus import GpuTable, Precision
from gpuplan.core.planner.efficiency import Cluster, amdahl_speedup, estimate_mfu
from gpuplan.core.planner.flops import training_flops
from gpuplan.core.planner.memory import (
    GIB,
    MemoryPlan,
    choose_plan,
    estimate_memory,
    suggestions,
)
from gpuplan.core.planner.workload import (
    Recompute,
    TrainingSetup,
    Workload,
    infer_shape,
)

LLAMA2_70B = infer_shape(70e9, seq_len=4096, layers=80, hidden=8192, heads=64, vocab=32000)


def test_flops_are_6nd_plus_palm_attention() -> None:
    shape = infer_shape(7e9, seq_len=2048, layers=32, hidden=4096, heads=32, vocab=32000)
    flops = training_flops(Workload(params=7e9, tokens=1e12, shape=shape))
    assert flops.dense == pytest.approx(6 * 7e9 * 1e12)
    assert flops.attention == pytest.approx(12 * 32 * 4096 * 2048 * 1e12)


def test_moe_counts_active_parameters() -> None:
    shape = infer_shape(671e9, seq_len=4096, layers=61, hidden=7168, heads=128)
    flops = training_flops(Workload(params=671e9, active_params=37e9, tokens=1e12, shape=shape))
    assert flops.dense == pytest.approx(6 * 37e9 * 1e12)


def test_long_context_attention_matters_for_small_models() -> None:
    """DOMAIN: attention adds ~70% for a 1B model at 8K context."""
    shape = infer_shape(1e9, seq_len=8192)
    flops = training_flops(Workload(params=1e9, tokens=1e9, shape=shape))
    assert 0.5 < flops.attention / flops.dense < 0.9


def test_inferred_shape_is_close_to_known_models() -> None:
    shape = infer_shape(6.7e9)
    assert (shape.layers, shape.hidden, shape.heads) == (32, 4096, 32)
    assert shape.inferred == {"seq_len", "layers", "hidden", "heads", "vocab"}
    assert infer_shape(65e9).hidden == 8192


def _mfu(table: GpuTable, gpu: str, gpus: float, precision: Precision = Precision.BF16,
         params: float = 70e9, network: float | None = None, **kw: Any) -> float:  # fmt: skip
    per_node = min(gpus, 8)
    cluster = Cluster(gpus, per_node, max(1, int(gpus // 8)), network)
    return estimate_mfu(table.get(gpu), precision, params, cluster, **kw).mfu


def _rate(table: GpuTable, gpu: str, gpus: float = 8, **kw: Any) -> float:
    """Model FLOP/s per GPU: MFU x dense bf16 peak."""
    return _mfu(table, gpu, gpus, **kw) * (table.get(gpu).peak_tflops(Precision.BF16) or 0)


def test_generations_are_close_to_peak_proportional(gpu_table: GpuTable) -> None:
    """The issue's measurements: A100 -> H100 2.9-3.7x, H100 -> B200 2.1-2.3x for 70B at the
    same GPU count; peaks say 3.2x and 2.3x. Not per-generation constants."""
    a100_h100 = _rate(gpu_table, "H100", 64) / _rate(gpu_table, "A100-80GB", 64)
    h100_b200 = _rate(gpu_table, "B200", 64) / _rate(gpu_table, "H100", 64)
    assert 2.7 < a100_h100 < 3.4
    assert 2.0 < h100_b200 < 2.4
    # More memory bandwidth for the same peak keeps more of it (H200 over H100).
    assert _rate(gpu_table, "H200") > _rate(gpu_table, "H100")


def test_mfu_depends_on_width_and_communication(gpu_table: GpuTable) -> None:
    assert _mfu(gpu_table, "H100", 8, params=125e6) < _mfu(gpu_table, "H100", 8, params=7e9)
    assert _mfu(gpu_table, "H100", 8, params=7e9) < _mfu(gpu_table, "H100", 8, params=405e9)
    # On a fast fabric node count costs little (anchor tables: ~0.5% per doubling) ...
    assert 0.9 < _mfu(gpu_table, "H100", 4096) / _mfu(gpu_table, "H100", 8) < 1.0
    # ... on a slow one more.
    assert _mfu(gpu_table, "H100", 4096, network=100.0) < _mfu(gpu_table, "H100", 4096)
    assert _mfu(gpu_table, "L40S", 8) < _mfu(gpu_table, "H100", 8)  # PCIe, no NVLink
    assert _mfu(gpu_table, "L40S", 8) < _mfu(gpu_table, "L40S", 1)


def test_expert_all_to_all_depends_on_routing_and_interconnect(gpu_table: GpuTable) -> None:
    top1 = _mfu(gpu_table, "H100", 64, moe_top_k=1)
    top8 = _mfu(gpu_table, "H100", 64, moe_top_k=8)
    assert top8 < top1 < _mfu(gpu_table, "H100", 64)
    # The same routing over a quarter of the fabric (800 Gbit/s per 8-GPU node) costs more.
    slow = _mfu(gpu_table, "H100", 64, moe_top_k=8, network=800.0)
    assert slow < top8
    # Inside one NVLink node the all-to-all costs less than across nodes.
    in_node = _mfu(gpu_table, "H100", 8, moe_top_k=8) / _mfu(gpu_table, "H100", 8)
    assert in_node > top8 / _mfu(gpu_table, "H100", 64)


def test_fp8_buys_the_fitted_speedup_not_2x(gpu_table: GpuTable) -> None:
    """fp8 on an H100 runs the Amdahl speed-up of its fitted share, 1 / (1 - f + f / 2),
    not the 2x of the peaks; it moved from 1.13x (a fixed speed-up) to 1.16x with the
    Amdahl form: held within 5% of the old figure."""
    from gpuplan.core.planner.calibration import FP8_GEMM_SHARE

    bf16 = _mfu(gpu_table, "H100", 64) * 989.4
    fp8 = _mfu(gpu_table, "H100", 64, Precision.FP8) * 1978.9
    assert fp8 / bf16 == pytest.approx(amdahl_speedup(FP8_GEMM_SHARE, 1978.9 / 989.4))
    assert fp8 / bf16 == pytest.approx(1.13, rel=0.05)
    assert fp8 / bf16 < 1.6


def test_mfu_override_replaces_the_model(gpu_table: GpuTable) -> None:
    est = estimate_mfu(gpu_table.get("H100"), Precision.BF16, 7e9, Cluster(8, 8, 1), override=0.33)
    assert est.mfu == 0.33 and est.overridden


def _workload(params: float, shape=LLAMA2_70B, **setup: object) -> Workload:  # type: ignore[no-untyped-def]
    return Workload(params=params, tokens=1e9, shape=shape, setup=TrainingSetup(**setup))  # type: ignore[arg-type]


def _korthikanti(params: float, gpus: int, recompute: Recompute) -> float:
    s, h, layers = 4096, 8192, 80
    states = 16 * params / gpus
    # Full: stored layer inputs + one layer's working set; none: FlashAttention, no 5as/h.
    full = layers * 2 * s * h + 34 * s * h
    acts = full if recompute is Recompute.FULL else layers * 34 * s * h
    return states + acts


def test_llama2_70b_on_64_a100_fits_with_full_recompute_only() -> None:
    for recompute, fits in ((Recompute.FULL, True), (Recompute.NONE, False)):
        work = _workload(70e9, zero=3, recompute=recompute, micro_batch=1)
        est = estimate_memory(work, LLAMA2_70B, 64, 80, MemoryPlan(3, recompute, 1, 1))
        assert est.fits is fits
        expected = _korthikanti(70e9, 64, recompute)
        assert est.model_bytes == pytest.approx(expected, rel=0.10)
        # The reported total adds CUDA/NCCL context and fragmentation on top.
        assert expected < est.total < expected * 1.15
        # ZeRO-3: 16 B/param spread over 64 GPUs.
        states = est.weights + est.gradients + est.optimizer
        assert states == pytest.approx(16 * 70e9 / 64)


def test_choose_plan_keeps_the_given_setup() -> None:
    work = _workload(70e9, zero=3, recompute=Recompute.NONE)
    est = choose_plan(work, LLAMA2_70B, 64, 8, 80, nvlink=True)
    assert not est.fits and est.plan.tensor_parallel == 1


def test_seven_b_full_fine_tune_on_one_24gb_gpu_does_not_fit() -> None:
    shape = infer_shape(7e9, seq_len=2048)
    work = _workload(7e9, shape=shape)
    est = choose_plan(work, shape, 1, 1, 24, nvlink=False)
    assert not est.fits
    assert est.weights + est.gradients + est.optimizer == pytest.approx(16 * 7e9)
    tips = suggestions(work, shape, 1, 24, est)
    assert any("more GPUs: at least" in t for t in tips)
    assert any("8-bit Adam" in t for t in tips)
    assert est.total / GIB > 100
