"""The fp4 (NVFP4 / MXFP4) training path and the Amdahl low-precision factor: the fitted
shares, held-out figures, peaks, refusals, spellings, and the planner against the anchors."""

from __future__ import annotations

import csv
import importlib.util
import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gpuplan.cli.main import main as gpuplan
from gpuplan.core.catalog.gpus import GpuTable
from gpuplan.core.catalog.kinds import Precision
from gpuplan.core.planner import calibration as cal
from gpuplan.core.planner.efficiency import Cluster, amdahl_speedup, estimate_mfu

ROOT = Path(__file__).resolve().parents[3]
ANCHORS = Path(__file__).parent / "anchors" / "throughput_anchors.csv"


@pytest.fixture(scope="module")
def fit_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "fit_low_precision", ROOT / "scripts/fit_low_precision.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fit_low_precision"] = module
    spec.loader.exec_module(module)
    return module


def test_shipped_shares_are_the_fit_on_rows_that_differ_only_in_precision(
    fit_script: ModuleType,
) -> None:
    pairs = fit_script.load_pairs()
    eights = [p for p in pairs if p.family == "fp8"]
    fours = [p for p in pairs if p.family == "fp4"]
    assert len(eights) == 9 and {p.base for p in eights} == {"bf16"}
    assert {p.gpu for p in eights} == {"H100", "GB200", "GB300"}
    assert len(fours) == 33 and {p.base for p in fours} == {"fp8"}
    assert {p.gpu for p in fours} == {"B200", "B300", "GB200", "GB300"}
    assert fit_script.fit(pairs) == (cal.FP8_GEMM_SHARE, cal.FP4_GEMM_SHARE)


def test_held_out_gpu_figures(fit_script: ModuleType) -> None:
    """Both shares refitted without a GPU, its pairs scored (measured 2026-12-04,
    benchmarks/results/low_precision.md): fp4 24.3%, worst 1.41x; fp8 9.1%, worst 1.20x.
    The fixed fp4 / fp8 gain it replaces scores 22.1%, 1.43x under the same hold-out: the
    Amdahl form is no more accurate on these tables, whose spread is the model's (Nemotron 3
    Super gains ~1.0x over fp8, the Llamas 1.1-1.5x), not the GPU's."""
    held = fit_script.hold_out(fit_script.load_pairs(), lambda p: p.gpu)
    four = fit_script.pooled(held, "fp4")
    eight = fit_script.pooled(held, "fp8")
    assert len(four) == 33 and len(eight) == 9
    assert statistics.median(abs(r - 1) for r in four) <= 0.25
    assert max(max(r, 1 / r) for r in four) <= 1.43
    assert statistics.median(abs(r - 1) for r in eight) <= 0.10
    assert max(max(r, 1 / r) for r in eight) <= 1.22


def test_blackwell_ultra_gets_its_fp4_advantage_from_the_peak_alone(
    gpu_table: GpuTable,
) -> None:
    """A GB200 given GB300's 1.5x fp4 peak and nothing else: the same bf16 MFU, and fp4
    faster by amdahl(f, 6) / amdahl(f, 4), with no per-GPU constant."""
    gb200 = gpu_table.get("GB200")
    ultra = replace(gb200, **{"fp4_tflops": gpu_table.get("GB300").fp4_tflops})
    cluster = Cluster(64, 64, 1)

    def rate(spec: Any, precision: Precision) -> float:
        mfu = estimate_mfu(spec, precision, 70e9, cluster).mfu
        return mfu * (spec.peak_tflops(precision) or 0.0)

    assert rate(ultra, Precision.BF16) == rate(gb200, Precision.BF16)
    gain = rate(ultra, Precision.FP4) / rate(gb200, Precision.FP4)
    share = cal.FP4_GEMM_SHARE
    assert gain == pytest.approx(amdahl_speedup(share, 6.0) / amdahl_speedup(share, 4.0))
    assert gain > 1.03


def _estimate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    # Speeds compared, not the 90-day default: a run of any length is listed.
    argv = ("--deadline", "3650d", *argv)
    code = gpuplan(["estimate", "--params", "70B", "--tokens", "1T", "--gpus", "64", *argv])
    captured = capsys.readouterr()
    record = json.loads(captured.out) if code == 0 and "--json" in argv else None
    return code, record, captured.err


def _hours(record: Any) -> dict[tuple[str, str, str], float]:
    return {
        (o["gpu"], str(o["instance_type"]), str(o["region"])): o["hours"]
        for o in record["options"]
        if o["pricing"] in ("on_demand", "custom", None)
    }


FACTOR = "fp4 speed-up / peak ratio (Amdahl)"


@pytest.mark.parametrize("gpu", ["B200", "GB300"])
def test_fp4_is_feasible_on_blackwell_at_the_amdahl_speed_up(
    capsys: pytest.CaptureFixture[str], gpu: str
) -> None:
    args = ("--gpu", gpu, "--price-per-gpu-hour", "5", "--all", "--json")
    code4, fp4, _ = _estimate(capsys, *args, "--precision", "fp4")
    code16, bf16, _ = _estimate(capsys, *args, "--precision", "bf16")
    assert code4 == code16 == 0
    assert fp4["workload"]["precision"] == "fp4"
    four, sixteen = _hours(fp4), _hours(bf16)
    shared = set(four) & set(sixteen)
    assert shared
    ratio = {"B200": 9000 / 2250, "GB300": 15000 / 2500}[gpu]
    speedup = amdahl_speedup(cal.FP4_GEMM_SHARE, ratio)
    for key in shared:
        assert sixteen[key] / four[key] == pytest.approx(speedup, rel=0.01)
    option = fp4["options"][0]
    assert option["mfu_factors"][FACTOR] == pytest.approx(speedup / ratio, abs=1e-4)
    assert "fp4" not in option["mfu_factors"]


def test_explain_says_what_the_fp4_factor_is(capsys: pytest.CaptureFixture[str]) -> None:
    code = gpuplan(["estimate", "--params", "70B", "--tokens", "1T", "--gpus", "64",
                    "--gpu", "B200", "--precision", "nvfp4", "--price-per-gpu-hour", "5",
                    "--explain"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert f"({FACTOR})" in out
    assert "of a bf16 step runs in fp4 matrix products at 4.0x the bf16 peak" in out


def test_gb300_fp4_gains_more_over_gb200_than_bf16_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """At equal count GB300 fp4 is faster than GB200 fp4 by the bf16 ratio (the spec
    table's matmul ceilings and memory) times Blackwell Ultra's fp4 advantage."""
    args = ("--gpu", "GB200,GB300", "--price-per-gpu-hour", "5", "--all", "--json")
    rates = {}
    for precision in ("bf16", "fp4"):
        code, record, _ = _estimate(capsys, *args, "--precision", precision)
        assert code == 0
        for gpu in ("GB200", "GB300"):
            rates[gpu, precision] = min(o["hours"] for o in record["options"] if o["gpu"] == gpu)
    bf16 = rates["GB200", "bf16"] / rates["GB300", "bf16"]
    fp4 = rates["GB200", "fp4"] / rates["GB300", "fp4"]
    assert fp4 > 1.0 and fp4 > bf16
    share = cal.FP4_GEMM_SHARE
    advantage = amdahl_speedup(share, 6.0) / amdahl_speedup(share, 4.0)
    assert fp4 / bf16 == pytest.approx(advantage, rel=0.01)


def test_blackwell_ultra_has_half_again_the_fp4_peak_at_equal_bf16(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert gpuplan(["gpus", "--gpu", "GB200,GB300,H100", "--json"]) == 0
    specs = {s["name"]: s for s in json.loads(capsys.readouterr().out)}
    assert specs["GB300"]["bf16_tflops"] == specs["GB200"]["bf16_tflops"]
    assert specs["GB300"]["fp4_tflops"] / specs["GB200"]["fp4_tflops"] == pytest.approx(1.5)
    assert specs["H100"]["fp4_tflops"] is None


@pytest.mark.parametrize("gpu", ["H100", "A100-80GB", "MI300X"])
def test_fp4_on_a_gpu_without_fp4_tensor_cores_is_refused(
    capsys: pytest.CaptureFixture[str], gpu: str
) -> None:
    code, _, err = _estimate(capsys, "--gpu", gpu, "--precision", "fp4")
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert f"--precision fp4 contradicts --gpu {gpu}" in lines[0]
    assert "Traceback" not in err


@pytest.mark.parametrize(("alias", "canonical"), [("nvfp4", "fp4"), ("MXFP4", "fp4"),
                                                  ("mxfp8", "fp8")])  # fmt: skip
def test_recipe_names_plan_at_their_precision(
    capsys: pytest.CaptureFixture[str], alias: str, canonical: str
) -> None:
    args = ("--gpu", "GB300", "--price-per-gpu-hour", "5", "--json")
    _, named, _ = _estimate(capsys, *args, "--precision", alias)
    _, plain, _ = _estimate(capsys, *args, "--precision", canonical)
    assert named["workload"]["precision"] == canonical
    assert _hours(named) == _hours(plain)


def test_a_job_file_takes_a_recipe_name(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text("params: 70B\ntokens: 1T\ngpu: [B200]\ngpus: 64\nprecision: nvfp4\n")
    code = gpuplan(["estimate", "--job", str(job), "--price-per-gpu-hour", "5", "--json"])
    record = json.loads(capsys.readouterr().out)
    assert code == 0 and record["workload"]["precision"] == "fp4"
    job.write_text("params: 70B\ntokens: 1T\ngpu: [H100]\ngpus: 64\nprecision: nvfp4\n")
    assert gpuplan(["estimate", "--job", str(job)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--precision fp4" in err


def test_without_a_gpu_list_fp4_falls_back_where_a_gpu_has_none(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, record, _ = _estimate(capsys, "--precision", "fp4", "--all", "--json")
    assert code == 0
    h100 = [o for o in record["options"] if o["gpu"] == "H100"]
    assert h100
    assert any("no fp4 path: fp8 peak used" in note for note in h100[0]["notes"])
    assert "fp8 speed-up / peak ratio (Amdahl)" in h100[0]["mfu_factors"]


def _planner_rate(capsys: pytest.CaptureFixture[str], row: dict[str, str]) -> float:
    """Steady-state tokens/s per GPU the CLI plans for an anchor row at fp4 (goodput 1)."""
    argv = ["estimate", "--params", row["params"], "--tokens", "1e12", "--gpu", row["gpu"],
            "--gpus", row["gpus"], "--precision", "fp4", "--seq-len", row["seq_len"],
            "--utilization", "1", "--price-per-gpu-hour", "1", "--json"]  # fmt: skip
    if row["active_params"]:
        argv += ["--active-params", row["active_params"]]
    assert gpuplan(argv) == 0
    option = json.loads(capsys.readouterr().out)["options"][0]
    return 1e12 / (option["hours"] * 3600 * int(row["gpus"]))


def test_planner_fp4_throughput_against_every_nvfp4_anchor_row(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The CLI's steady-state fp4 rate (the model as a user runs it: shape from the
    parameters, its own memory plan, top-k 2 for the MoE) against the 33 Megatron-Bridge
    nvfp4 rows. Measured 2026-12-04: predicted / measured 0.51-2.25, median error 45.9%.
    The dense Llamas run slow (0.51-0.77: Megatron keeps more of Blackwell's peak than the
    level fitted on three frameworks), Nemotron 3 Super fast (1.39-2.25: its hybrid Mamba /
    latent-MoE layers are not the planner's MoE); the fp4-over-fp8 part alone is the pair
    check above (24.3% held out)."""
    with ANCHORS.open(encoding="utf-8", newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["precision"] == "nvfp4"]
    assert len(rows) == 33
    ratios = {id(r): _planner_rate(capsys, r) / float(r["tokens_per_s_per_gpu"]) for r in rows}
    errors = [abs(x - 1) for x in ratios.values()]
    assert statistics.median(errors) <= 0.47
    assert max(max(x, 1 / x) for x in ratios.values()) <= 2.30
    dense = [ratios[id(r)] for r in rows if not r["active_params"]]
    moe = [ratios[id(r)] for r in rows if r["active_params"]]
    assert len(dense) == 18 and min(dense) >= 0.5 and max(dense) <= 0.80
    assert len(moe) == 15 and min(moe) >= 1.35 and max(moe) <= 2.30


def test_the_reference_matmul_share_is_the_h100_row_of_the_spec_table() -> None:
    """calibration.MATMUL_SHARE_REFERENCE repeats the H100 row; a table edit must move both."""
    from gpuplan.core.catalog.gpus import Precision
    from gpuplan.core.planner.efficiency import architecture_factor
    from gpuplan.loaders.catalog import load_gpus

    h100 = load_gpus().resolve("H100")
    peak = h100.peak_tflops(Precision.BF16)
    assert h100.bf16_matmul_tflops is not None and peak
    assert h100.bf16_matmul_tflops / peak == pytest.approx(cal.MATMUL_SHARE_REFERENCE)
    assert architecture_factor(h100)[0] == pytest.approx(1.0)
