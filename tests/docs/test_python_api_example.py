"""The README's Python example runs and names what it says (issue 37): the cheapest H100
GPU-hour on spot, not the cheapest instance-hour (a 1-GPU VM at $2.51/h while an
8-GPU instance sells the GPU-hour at $1.41)."""

from __future__ import annotations

import contextlib
import io
import re
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.api import PricingModel, find_offers, load_catalog

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_python_example_prints_the_cheapest_gpu_hour(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("GPUPLAN_CATALOG_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    (code,) = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})  # the README's own example
    printed = Decimal(out.getvalue().split()[-1])
    spot = [
        o.price_per_gpu_hour(PricingModel.SPOT)
        for o in find_offers(load_catalog(), gpus=["H100"], pricing="spot")
    ]
    assert printed == min(p for p in spot if p is not None)
