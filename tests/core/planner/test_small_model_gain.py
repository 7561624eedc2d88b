"""Small models gain less from a faster GPU: the latency-bound share of a narrow step."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from gpuplan.core.planner import calibration as cal
from gpuplan.core.planner.efficiency import latency_factor
from gpuplan.loaders.catalog import load_gpus

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def fit_script() -> ModuleType:
    name = "fit_small_model_gain"
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_no_faster_than_an_h100_keeps_the_fitted_model() -> None:
    gpus = load_gpus()
    for name in ("A100-80GB", "H100", "V100-32GB"):
        for hidden in (512, 1024, 4096):
            assert latency_factor(gpus.resolve(name), hidden).value == 1.0, (name, hidden)


def test_a_narrow_model_keeps_less_of_a_faster_gpu() -> None:
    b200 = load_gpus().resolve("B200")
    bert, llama_8b, llama_70b = (latency_factor(b200, h).value for h in (1024, 4096, 8192))
    # Half of BERT-large's H100 step is latency-bound: B200 is 2.2x the H100's matmul-bound
    # speed, so the step runs 1 / (0.5 / 2.2 + 0.5) = 1.4x faster, a factor ~0.62 on MFU.
    assert 0.55 < bert < 0.7
    assert bert < llama_8b < llama_70b <= 1.0
    assert llama_8b > 0.98  # the large-model pairs keep their figures


def test_shipped_constants_are_the_fit(fit_script: ModuleType) -> None:
    scored = fit_script.base_scores()
    assert fit_script.fit(scored) == (cal.LATENCY_HALF_WIDTH, cal.LATENCY_EXPONENT)
    small = [s for s in scored if fit_script.small(s)]
    held = fit_script.ratios(small, cal.LATENCY_HALF_WIDTH, cal.LATENCY_EXPONENT)
    off = [s.ratio() for s in small]
    assert fit_script._median(held) < 0.1 < fit_script._median(off)
    assert fit_script._worst(held) <= 1.35 < fit_script._worst(off)
