"""The fp4 (NVFP4 / MXFP4) training path: peaks, the fitted speed-up, refusals, spellings."""

from __future__ import annotations

import csv
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from gpuplan.cli.main import main as gpuplan
from gpuplan.core.planner import calibration as cal

ANCHORS = Path(__file__).parent / "anchors" / "throughput_anchors.csv"


def _family(precision: str) -> str | None:
    text = precision.lower()
    if "fp4" in text:
        return "fp4"
    if "fp8" in text:
        return "fp8"
    return None


def test_the_fp4_speed_up_is_the_median_of_the_anchor_rows_that_differ_only_in_precision() -> None:
    best: dict[tuple[str, ...], dict[str, float]] = defaultdict(dict)
    with ANCHORS.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            family = _family(row["precision"])
            if family is None or not row["tokens_per_s_per_gpu"]:
                continue
            key = (row["source_id"], row["model"], row["gpu"], row["gpus"], row["seq_len"])
            rate = float(row["tokens_per_s_per_gpu"])
            best[key][family] = max(rate, best[key].get(family, 0.0))
    ratios = [v["fp4"] / v["fp8"] for v in best.values() if {"fp4", "fp8"} <= set(v)]
    assert len(ratios) == 33
    assert statistics.median(ratios) == pytest.approx(cal.FP4_OVER_FP8, abs=0.005)


def _estimate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    code = gpuplan(["estimate", "--params", "70B", "--tokens", "1T", "--gpus", "64", *argv])
    captured = capsys.readouterr()
    record = json.loads(captured.out) if code == 0 and "--json" in argv else None
    return code, record, captured.err


def _hours(record: Any) -> dict[tuple[str, str, str], float]:
    return {
        (o["gpu"], str(o["instance_type"]), str(o["region"])): o["hours"]
        for o in record["options"]
        if o["pricing"] == "on_demand" or o["pricing"] is None
    }


def test_fp4_runs_at_the_fitted_speed_up_over_fp8_on_blackwell(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ("--gpu", "B200", "--price-per-gpu-hour", "5", "--all", "--json")
    code4, fp4, _ = _estimate(capsys, *args, "--precision", "fp4")
    code8, fp8, _ = _estimate(capsys, *args, "--precision", "fp8")
    assert code4 == code8 == 0
    four, eight = _hours(fp4), _hours(fp8)
    shared = set(four) & set(eight)
    assert shared
    for key in shared:
        assert eight[key] / four[key] == pytest.approx(cal.FP4_OVER_FP8, rel=0.01)
    factors = fp4["options"][0]["mfu_factors"]
    # 1.13 x 1.10 of bf16 at the 9 PF fp4 peak: 1.243 x 2,250 / 9,000.
    expected = cal.FP8_SPEEDUP * cal.FP4_OVER_FP8 * 2250 / 9000
    assert factors["fp4"] == pytest.approx(expected, abs=1e-4)


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


def test_without_a_gpu_list_fp4_falls_back_where_a_gpu_has_none(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, record, _ = _estimate(capsys, "--precision", "fp4", "--all", "--json")
    assert code == 0
    h100 = [o for o in record["options"] if o["gpu"] == "H100"]
    assert h100
    assert any("no fp4 path: fp8 peak used" in note for note in h100[0]["notes"])
