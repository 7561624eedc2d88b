"""Strict input: contradicting flags and non-finite or absurd numbers exit 2 with one line.

Each case runs the real CLI entry point (flags, and the same values through a job file)
and checks: exit code 2, exactly one line on stderr naming the flag(s), no traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.errors import InputError
from gpuplan.core.planner.quantities import check_finite, parse_amount

WORK = ("--params", "7B", "--tokens", "1T")


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    try:
        code = main(["estimate", *argv])
    except SystemExit as exc:  # argparse
        code = int(exc.code or 0)
    _, err = capsys.readouterr()
    return code, err


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


CONTRADICTIONS = [
    ((*WORK, "--samples", "1000", "--flops-per-sample", "1e12"), ("--params", "--samples")),
    (("--tokens", "1T", "--samples", "10", "--flops-per-sample", "1e9"), ("--tokens", "--samples")),
    ((*WORK, "--fsdp", "--zero", "1"), ("--fsdp", "--zero 1")),
    ((*WORK, "--precision", "fp8", "--gpu", "A100-80GB"), ("--precision fp8", "A100-80GB")),
    ((*WORK, "--precision", "fp8", "--gpu", "A10G"), ("--precision fp8", "A10G")),
    ((*WORK, "--precision", "bf16", "--gpu", "V100-32GB"), ("--precision bf16", "V100-32GB")),
    ((*WORK, "--pricing", "spot", "--reuse-commitment"), ("--reuse-commitment", "--pricing spot")),
    ((*WORK, "--mfu", "0.4", "--throughput", "3000", "--measured-on", "H100"),
     ("--mfu", "--throughput")),
    ((*WORK, "--measured-on", "H100"), ("--measured-on", "--throughput")),
    ((*WORK, "--active-params", "9B"), ("--active-params", "--params")),
    ((*WORK, "--active-params", "1B", "--experts", "8", "--top-k", "9"),
     ("--top-k 9", "--experts 8")),
    ((*WORK, "--top-k", "2"), ("--top-k", "--active-params")),
    ((*WORK, "--micro-batch", "8", "--global-batch", "4"), ("--micro-batch 8", "--global-batch 4")),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "names"), CONTRADICTIONS)
def test_contradicting_flags_exit_2_naming_both(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], names: tuple[str, str]
) -> None:
    code, err = _run(capsys, *argv)
    line = _one_line(err)
    assert code == 2, line
    assert names[0] in line and names[1] in line, line


NOT_FINITE = ["1e308", "inf", "-inf", "nan", "NaN", "Infinity", str(10**400), "1e400"]


@pytest.mark.parametrize("value", NOT_FINITE)
@pytest.mark.parametrize("flag", ["--params", "--tokens", "--seq-len", "--gpus", "--budget"])
def test_non_finite_and_absurd_numbers_exit_2(
    capsys: pytest.CaptureFixture[str], flag: str, value: str
) -> None:
    argv = dict(zip(WORK[::2], WORK[1::2], strict=True))
    argv[flag] = value
    flat = [item for pair in argv.items() for item in pair]
    code, err = _run(capsys, *flat)
    line = _one_line(err)
    assert code == 2 and flag in line, line


@pytest.mark.parametrize("flag", ["--mfu", "--utilization", "--deadline", "--fx"])
@pytest.mark.parametrize("value", ["inf", "nan", "1e308", str(10**400)])
def test_other_number_flags_refuse_non_finite(
    capsys: pytest.CaptureFixture[str], flag: str, value: str
) -> None:
    extra = ("--currency", "EUR") if flag == "--fx" else ()
    code, err = _run(capsys, *WORK, flag, value, *extra)
    line = _one_line(err)
    assert code == 2 and flag in line, line


def test_negative_tokens_same_message_with_space_or_equals(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code_a, err_a = _run(capsys, "--params", "7B", "--tokens", "-1T")
    code_b, err_b = _run(capsys, "--params", "7B", "--tokens=-1T")
    assert code_a == code_b == 2
    assert _one_line(err_a) == _one_line(err_b)
    assert "--tokens" in err_a and "positive" in err_a


@pytest.mark.parametrize("value", ["1e308", ".inf", ".nan", str(10**400)])
def test_job_file_numbers_are_checked_and_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str
) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(f"params: {value}\ntokens: 1T\n", encoding="utf-8")
    code, err = _run(capsys, "--job", str(job))
    line = _one_line(err)
    assert code == 2 and "job.yaml" in line and "params" in line, line


def test_json_job_file_with_huge_number(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    job = tmp_path / "job.json"
    job.write_text('{"params": 1e400, "tokens": "1T"}', encoding="utf-8")
    code, err = _run(capsys, "--job", str(job))
    line = _one_line(err)
    assert code == 2 and "job.json" in line and "params" in line, line


def test_job_file_contradiction_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    job = tmp_path / "job.yaml"
    job.write_text("params: 7B\ntokens: 1T\nfsdp: true\nzero: 1\n", encoding="utf-8")
    code, err = _run(capsys, "--job", str(job))
    line = _one_line(err)
    assert code == 2 and "--fsdp" in line and "--zero 1" in line, line


def test_unknown_region_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(capsys, *WORK, "--region", "mars-1")
    line = _one_line(err)
    assert code == 2 and "--region mars-1" in line and "no catalog offer" in line


def test_reasons_are_never_empty_when_a_filter_matches_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["estimate", *WORK, "--gpu", "H100", "--region", "us-east1", "--provider",
                 "gcp", "--json"])  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 1
    data = json.loads(out)
    assert data["infeasible_reasons"]
    assert all(item["reasons"] for item in data["infeasible"])
    assert "H100: no catalog offer in provider gcp and region us-east1" in err


def test_top_and_explain_refuse_absurd_counts(capsys: pytest.CaptureFixture[str]) -> None:
    for flag in ("--top", "--explain"):
        code, err = _run(capsys, *WORK, flag, str(10**400))
        assert code == 2 and flag in _one_line(err)


def test_check_finite_is_a_reusable_pure_check() -> None:
    assert check_finite(7e9, "--params") == 7e9
    assert check_finite("40", "budget_usd", maximum=100) == 40.0
    for bad in (float("inf"), float("nan"), "nan", 1e308, 10**400, "x"):
        with pytest.raises(InputError):
            check_finite(bad, "--params")
    with pytest.raises(InputError, match="absurdly large"):
        parse_amount("1e16", "--params")


def test_a_fresh_process_prints_one_line_and_no_traceback() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gpuplan", "estimate", "--params", "1e308", "--tokens", "1T"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert _one_line(done.stderr).startswith("gpuplan: error: --params")


def test_a_width_that_is_not_heads_times_128_is_not_a_contradiction(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Models set the head size on its own (Gemma 7B: 16 heads x 256 on a 3,072 width)."""
    code, _ = _run(capsys, *WORK, "--hidden", "3072", "--heads", "16", "--layers", "28",
                   "--gpu", "H100", "--gpus", "64", "--json")  # fmt: skip
    assert code == 0
    code, _ = _run(capsys, *WORK, "--hidden", "4544", "--heads", "33", "--gpu", "H100",
                   "--gpus", "64", "--json")  # fmt: skip
    assert code == 0


def test_default_precision_on_a_gpu_without_bf16_runs_at_its_fp16_peak(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Only an explicit --precision bf16 on a V100 is a contradiction; the default falls back."""
    # 64 V100s take most of a year on 7B x 1T: over the 90-day default, so a deadline.
    argv = ["estimate", *WORK, "--gpu", "V100-32GB", "--gpus", "64", "--deadline", "3650d"]
    assert main([*argv, "--json"]) == 0
    default = json.loads(capsys.readouterr().out)
    argv += ["--precision", "fp16"]
    assert main([*argv, "--json"]) == 0
    fp16 = json.loads(capsys.readouterr().out)
    hours = [o["hours"] for o in default["options"]]
    assert hours and hours == [o["hours"] for o in fp16["options"]]
