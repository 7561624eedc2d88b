"""``gpuplan estimate --compare-gpus``: the same job on several generations, one screen."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from typing import Any

from gpuplan.cli.main import main
from gpuplan.core.planner.compare import COMPARED_GPUS


def _run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["estimate", *argv])
    return code, out.getvalue()


def _rows(*argv: str) -> tuple[int, list[dict[str, Any]]]:
    code, text = _run(*argv, "--compare-gpus", "--json")
    return code, json.loads(text)["compare"]


def test_one_row_per_generation_with_time_cost_and_why() -> None:
    # 100B tokens: 8 x A100 finish inside the 90-day default (1T would not).
    code, rows = _rows("--params", "7B", "--tokens", "100B")
    assert code == 0
    assert [r["gpu"] for r in rows] == list(COMPARED_GPUS)
    sold = [r for r in rows if r["cost_usd"] is not None]
    assert len(sold) >= 4
    for row in rows:
        assert row["gpus"] == 8 and row["feasible"], row
        assert row["hours"] > 0 and "TFLOP/s" in row["why"] and "MFU" in row["why"]
    by = {r["gpu"]: r for r in rows}
    # Generations in the measured proportion (A100 -> H100 2.9-3.7x, H100 -> B200 2.1-2.3x).
    assert 2.7 < by["A100-80GB"]["hours"] / by["H100"]["hours"] < 3.5
    assert 2.0 < by["H100"]["hours"] / by["B200"]["hours"] < 2.5
    assert by["H100"]["speedup_vs_reference"] == by["A100-80GB"]["hours"] / by["H100"]["hours"]


def test_a_gpu_that_cannot_hold_the_job_says_why() -> None:
    code, rows = _rows("--params", "70B", "--tokens", "100B", "--gpus", "8")
    by = {r["gpu"]: r for r in rows}
    assert not by["A100-80GB"]["feasible"]
    assert "memory" in by["A100-80GB"]["why"] and by["A100-80GB"]["reasons"]
    assert code == (0 if any(r["feasible"] for r in rows) else 1)


def test_the_gpu_list_and_the_table() -> None:
    # 20B tokens: more on 16 L4s would take over the 90-day default.
    code, text = _run("--params", "7B", "--tokens", "20B", "--gpu", "L4,A10G", "--gpus", "16",
                      "--compare-gpus")  # fmt: skip
    assert code == 0
    assert "L4 x 16" in text and "A10G x 16" in text and "H100" not in text
    assert _run("--params", "7B", "--tokens", "1T", "--gpus", "8,16", "--compare-gpus")[0] == 2
