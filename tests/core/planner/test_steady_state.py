"""The steady-state MFU model against the framework benchmark tables (anchors/).

scripts/fit_steady_state.py fits the constants on tests/core/planner/anchors/
throughput_anchors.csv; these tests check that the shipped constants are that fit, guard
the figures held out by framework, and check the generation ratios against the
cross-generation pairs (anchors/cross_generation.csv).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import statistics
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gpuplan.core.catalog.kinds import Precision
from gpuplan.core.planner import calibration as cal

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def fit_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "fit_steady_state", ROOT / "scripts/fit_steady_state.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fit_steady_state"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def anchors(fit_script: ModuleType) -> list[Any]:
    return list(fit_script.load_anchors())


def test_anchors_cover_three_frameworks_and_three_generations(anchors: list[Any]) -> None:
    assert {a.family for a in anchors} == {"megatron", "llm-foundry", "torchtitan"}
    generations = {a.spec.architecture.split()[0] for a in anchors}
    assert {"Ampere", "Hopper", "Blackwell"} <= generations
    assert all(a.quote for a in anchors)


def test_shipped_constants_are_the_anchor_fit(fit_script: ModuleType, anchors: list[Any]) -> None:
    base, half, traffic, fp8_share = fit_script.fit(anchors)
    assert base == pytest.approx(cal.STEADY_BASE, abs=0.005)
    assert half == cal.WIDTH_HALF
    assert traffic == cal.MEMORY_TRAFFIC
    assert fp8_share == cal.FP8_GEMM_SHARE
    slope = fit_script.scale_out_slope(anchors)
    assert slope == pytest.approx(cal.INTER_EXPOSED_PER_DOUBLING, abs=0.001)


def test_held_out_framework_figures(fit_script: ModuleType, anchors: list[Any]) -> None:
    """Each framework scored by constants fitted on the other two. Frameworks differ by up
    to 2x on the same GPU and model (torchtitan's 2024-25 H100 rows keep 0.3-0.4 of peak
    where Megatron keeps 0.5+): that spread is what these figures measure. 36.3% since the
    architecture factor is the measured matmul ceiling (30.2% with NVIDIA parts all at 1.0):
    one base now carries llm-foundry's A100 rows and Megatron's Blackwell rows together;
    32.2% with the Amdahl fp8 factor (1.16x bf16 for fp8 where it was 1.13x)."""
    scored, _ = fit_script.leave_family_out(anchors)
    median, worst = fit_script.errors(scored)
    assert median <= 0.33
    assert worst <= 5.0
    inside = [fit_script.Scored(a, fit_script.predict(a, fit_script.shipped())) for a in anchors]
    assert fit_script.errors(inside)[0] <= 0.20


def test_generation_ratios_match_the_cross_generation_pairs(fit_script: ModuleType) -> None:
    """Same table, same GPU count, two generations: the predicted throughput ratio against
    the measured one. H100 -> B200 (Megatron-Bridge) within 15%; A100 -> H100 lies between
    llm-foundry's 2023 tables (2.2-2.5x) and the issue's measurements (2.9-3.7x)."""
    rows = fit_script.load_cross()
    shipped = fit_script.shipped()

    def ratios(a: str, b: str) -> list[float]:
        return [
            fit_script.predicted_ratio(r, shipped) / r.measured
            for r in rows
            if r.a.name.startswith(a) and r.b.name == b
        ]

    h100_b200 = ratios("H100", "B200")
    assert h100_b200 and abs(statistics.median(h100_b200) - 1) <= 0.15
    a100_h100 = ratios("A100-80GB", "H100")
    assert a100_h100 and 1.0 < statistics.median(a100_h100) < 1.4
    everything = [fit_script.predicted_ratio(r, shipped) / r.measured for r in rows]
    assert statistics.median(abs(x - 1) for x in everything) <= 0.18


def test_fair_cross_generation_subset_is_decided_by_the_rows(fit_script: ModuleType) -> None:
    """The fair pairs (dense, same precision recipe, newest Megatron-Bridge release) are
    chosen from what the rows say, never by their error; on them the model is off by a
    median 13.0%, worst 1.51x (87 pairs, two of them nvfp4 on both sides): the issue's
    worst-case target (1.35x) is not met, mostly llm-foundry's A100-80GB -> H100 and
    GB200 -> GB300 (measured 1.12-1.50x, the spec table gives both the same bf16 peak)."""
    rows = fit_script.load_cross()
    fair = [r for r in rows if not r.unfair]
    assert len(rows) == 431 and len(fair) == 87
    fp4 = [r for r in rows if r.precision is Precision.FP4]
    assert len(fp4) == 26 and sum(not r.unfair for r in fp4) == 2
    assert not any(fit_script.is_moe(r.model) for r in fair)
    recipe = [r for r in rows if r.unfair == fit_script.UNFAIR_RECIPE]
    assert recipe and all(r.source == "llm-foundry" for r in recipe)
    assert {r.a.name for r in recipe} == {"A100-40GB", "A100-80GB"}
    shipped = fit_script.shipped()
    ratios = [fit_script.predicted_ratio(r, shipped) / r.measured for r in fair]
    # 13.0%, worst 1.51x with the measured matmul ceilings (20.7%, 1.64x before); the two
    # fair nvfp4 pairs (Llama 3 70B and 3.1 405B, GB200 -> GB300) leave it there.
    assert 0.12 <= statistics.median(abs(x - 1) for x in ratios) <= 0.14
    assert max(max(x, 1 / x) for x in ratios) <= 1.53


def test_nvfp4_cross_generation_pairs_are_scored(fit_script: ModuleType) -> None:
    """The 26 pairs with nvfp4 on both sides (Megatron-Bridge, B200/B300/GB200/GB300): 16.5%,
    worst 1.43x with the Amdahl fp4 factor (the fixed gain over fp8 scored 18.1%, 1.49x).
    Blackwell Ultra's 1.5x fp4 peak now shows: GB200 -> GB300 at fp4 is predicted faster
    than at bf16, though still short of the 1.21-1.54x measured."""
    rows = [r for r in fit_script.load_cross() if r.precision is Precision.FP4]
    shipped = fit_script.shipped()
    ratios = [fit_script.predicted_ratio(r, shipped) / r.measured for r in rows]
    assert statistics.median(abs(x - 1) for x in ratios) <= 0.17
    assert max(max(x, 1 / x) for x in ratios) <= 1.45
    gb = next(r for r in rows if (r.a.name, r.b.name) == ("GB200", "GB300"))
    bf16 = dataclasses.replace(gb, precision=Precision.BF16)
    assert fit_script.predicted_ratio(gb, shipped) > fit_script.predicted_ratio(bf16, shipped)


def test_all_to_all_share_is_fitted_where_it_crosses_the_fabric(fit_script: ModuleType) -> None:
    spec = importlib.util.spec_from_file_location(
        "fit_all_to_all", ROOT / "scripts/fit_all_to_all.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fit_all_to_all"] = module
    spec.loader.exec_module(module)
    rows = [a for a in module.load_moe_anchors() if module.crosses_fabric(a)]
    assert len({a.model for a in rows}) >= 2
    assert module.fit_all_to_all(rows) == cal.A2A_EXPOSED
