"""NVLink domains: a GB200/GB300 NVL72 rack is one domain of 72 GPUs, and the step-end
collectives of a frozen-base fine-tune cost more the more domains they cross."""

from __future__ import annotations

import json
import math
from types import ModuleType

import pytest

from gpuplan.core.catalog.gpus import GpuTable, Precision
from gpuplan.core.planner import calibration as cal
from gpuplan.core.planner import comm
from gpuplan.core.planner.efficiency import Cluster, JobShape, estimate_mfu, sync_factor
from gpuplan.core.planner.workload import Method
from gpuplan.loaders.catalog import load_gpus
from tests.core.planner.test_cross_generation_external import _load

LORA_70B = JobShape(
    hidden=8192, layers=80, flops_per_token=3.5e11, method=Method.LORA, seq_len=8192
)


@pytest.fixture(scope="module")
def gpus() -> GpuTable:
    return load_gpus()


@pytest.fixture(scope="module")
def fit_script() -> ModuleType:
    return _load("fit_domain_sync")


def _factor(gpus: GpuTable, gpu: str, count: float, per_node: float, job: JobShape) -> float:
    size = comm.domain_size(gpus.resolve(gpu), per_node)
    return sync_factor(count, size, job).value


def test_nvl72_racks_are_one_nvlink_domain(gpus: GpuTable) -> None:
    for name in ("GB200", "GB300"):
        assert gpus.resolve(name).nvlink_domain == 72
        # sold as 4-GPU trays: the domain is still the rack
        assert comm.domain_size(gpus.resolve(name), 4) == 72
    for name in ("H100", "H200", "B200", "B300", "MI300X", "A100-80GB"):
        assert gpus.resolve(name).nvlink_domain is None
        assert comm.domain_size(gpus.resolve(name), 8) == 8
    assert comm.domains(512, 72) == 8
    assert comm.domains(512, 8) == 64
    assert comm.domains(72, 72) == comm.domains(8, 8) == 1


def test_a_lora_step_on_many_hgx_nodes_pays_what_an_nvl72_rack_does_not(gpus: GpuTable) -> None:
    # MLPerf Llama 2 70B LoRA at 512 GPUs: 1,024 tokens per GPU per step. The H200 run's
    # step took 1.7x its one-node time; the GB200 run's 1.06x.
    h200 = _factor(gpus, "H200", 512, 8, LORA_70B)
    gb200 = _factor(gpus, "GB200", 512, 4, LORA_70B)
    assert 0.45 < h200 < 0.7
    assert 0.9 < gb200 < 1.0
    # within one domain, nothing
    assert _factor(gpus, "H200", 8, 8, LORA_70B) == 1.0
    assert _factor(gpus, "GB200", 64, 4, LORA_70B) == 1.0


def test_weight_gradients_hide_it(gpus: GpuTable) -> None:
    """Pretraining and full fine-tuning overlap the collectives with their weight-gradient
    GEMMs (MLPerf Llama 3.1 405B scales flat from 512 to 2,048 H100s): no factor."""
    for method in (Method.PRETRAIN, Method.FULL):
        job = JobShape(8192, 80, 4.2e11, method, seq_len=8192)
        assert _factor(gpus, "H200", 512, 8, job) == 1.0
    assert _factor(gpus, "H200", 512, 8, JobShape(8192, 80, 3.5e11, Method.QLORA, 8192)) < 0.7


def test_a_larger_global_batch_shrinks_it(gpus: GpuTable) -> None:
    small = _factor(gpus, "H200", 512, 8, LORA_70B)
    given = JobShape(8192, 80, 3.5e11, Method.LORA, seq_len=8192, global_batch=1024)
    large = _factor(gpus, "H200", 512, 8, given)
    assert small < large < 1.0
    # Without a stated batch: 8 sequences, or one per 8 GPUs when that is more.
    assert comm.step_tokens_per_gpu(8, 8192, None) == 8 * 8192 / 8
    assert comm.step_tokens_per_gpu(512, 8192, None) == 8192 / 8
    assert comm.step_tokens_per_gpu(512, 8192, 1024) == 1024 * 8192 / 512
    exposed = comm.sync_exposed(64, 1024 * 3.5e11)
    assert exposed == pytest.approx(cal.SYNC_FLOP * 63 / (1024 * 3.5e11))


def test_the_factor_is_named_in_the_mfu(gpus: GpuTable) -> None:
    mfu = estimate_mfu(gpus.resolve("H200"), Precision.FP8, 70e9, Cluster(512, 8, 64), job=LORA_70B)
    names = {f.name: f for f in mfu.factors}
    assert "step synchronisation" in names
    assert "64 NVLink domains" in names["step synchronisation"].why
    one_rack = estimate_mfu(
        gpus.resolve("GB200"), Precision.FP8, 70e9, Cluster(64, 4, 16), job=LORA_70B
    )
    names = {f.name: f for f in one_rack.factors}
    # 64 GB200s are one NVL72 rack: no scale-out, no synchronisation across domains
    assert "scale-out" not in names and "step synchronisation" not in names


def test_the_cli_plans_hgx_and_nvl72_lora_apart() -> None:
    bench = _load("bench_cross_generation_external")
    argv = "estimate --params 70B --tokens 60M --seq-len 8192 --method lora --precision fp8 "
    hours = {}
    for gpu in ("H200", "GB200"):
        code, out, _ = bench.run_cli(
            [*f"{argv}--gpu {gpu} --gpus 512 --compare-gpus --json".split()]
        )
        assert code == 0
        row = json.loads(out)["compare"][0]
        hours[gpu] = row["gpu_hours"]
    # MLPerf v5.0 measured 3.52x; 2.23x before the NVLink domain entered the model
    assert 3.0 < hours["H200"] / hours["GB200"] < 4.2


def test_shipped_constant_is_the_fit_and_holds_out_by_round(fit_script: ModuleType) -> None:
    rows = fit_script.scaling_rows()
    assert len(rows) >= 12
    assert math.isclose(fit_script.fit(rows), cal.SYNC_FLOP)
    scored = fit_script.base_scores()
    pooled = []
    for held in sorted({fit_script.round_of(s) for s in scored}):
        value = fit_script.fit([r for r in rows if r.round != held])
        pooled += fit_script.ratios([s for s in scored if fit_script.round_of(s) == held], value)
    assert len(pooled) == 47
    median = sorted(abs(v - 1) for v in pooled)[len(pooled) // 2]
    worst = max(max(v, 1 / v) for v in pooled)
    assert median <= 0.10, f"median {median:.1%}"
    assert worst <= 1.35, f"worst {worst:.2f}x"
    off = max(max(s.ratio(), 1 / s.ratio()) for s in scored)
    assert off > 1.5  # the H200 -> GB200 LoRA pair at 512 GPUs without the factor
