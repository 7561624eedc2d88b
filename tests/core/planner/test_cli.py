"""``gpuplan estimate`` end to end: JSON shape, exit codes, errors, table, explain, CSV."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.planner.options import DEFAULT_GOODPUT

OPTION_KEYS = {
    "gpu", "gpus", "nodes", "provider", "instance_type", "region", "pricing", "hours",
    "gpu_hours", "cost_usd", "hourly_usd", "mfu", "fits_memory", "memory_per_gpu_gib", "notes",
}  # fmt: skip


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["estimate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_shape_and_exact_gpu_count(
    capsys: pytest.CaptureFixture[str], catalog_dir: Path
) -> None:
    code, out, _ = run(
        capsys, "--params", "7B", "--tokens", "1T", "--gpu", "H100", "--gpus", "64",
        "--json", "--catalog-dir", str(catalog_dir),
    )  # fmt: skip
    assert code == 0
    data = json.loads(out)
    assert data["workload"]["total_flops"] > 6 * 7e9 * 1e12
    assert data["workload"]["params"] == 7e9
    assert data["options"]
    for option in data["options"]:
        assert option.keys() >= OPTION_KEYS
        assert option["gpu"] == "H100" and option["gpus"] == 64
        assert option["gpu_hours"] == pytest.approx(option["hours"] * 64)
    pricing = {o["pricing"] for o in data["options"]}
    assert {"on_demand", "spot"} <= pricing
    assert "infeasible_reasons" in data and "infeasible" not in data
    for option in data["options"]:
        for key in ("hours", "gpu_hours", "cost_usd"):
            low, high = option[f"{key}_low"], option[f"{key}_high"]
            assert (low <= option[key] <= high and low < high) or key == "cost_usd", key
        if option["commitment_usd"] is None:  # a whole reserved term costs the same either way
            assert option["cost_usd_low"] < option["cost_usd"] < option["cost_usd_high"]


def test_unsold_gpu_has_null_provider_and_cost(
    capsys: pytest.CaptureFixture[str], catalog_dir: Path
) -> None:
    code, out, _ = run(
        capsys, "--params", "671B", "--active-params", "37B", "--tokens", "14.8T", "--gpu",
        "H800", "--gpus", "2048", "--precision", "fp8", "--json", "--catalog-dir",
        str(catalog_dir),
    )  # fmt: skip
    assert code == 0
    (only,) = json.loads(out)["options"]
    assert only["provider"] is None and only["cost_usd"] is None and only["nodes"] == 256


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--params", "-1", "--tokens", "1T"], "--params"),
        (["--params", "7B", "--tokens", "lots"], "--tokens"),
        (["--params", "7B", "--tokens", "1T", "--gpu", "H1000"], "H1000"),
        (["--params", "7B", "--tokens", "1T", "--mfu", "40"], "--mfu"),
        (["--params", "7B", "--tokens", "1T", "--gpus", "512-8"], "--gpus"),
        (["--params", "7B"], "--tokens"),
        (["--params", "7B", "--tokens", "1T", "--currency", "EUR"], "--fx"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], catalog_dir: Path, argv: list[str], needle: str
) -> None:
    code, out, err = run(capsys, *argv, "--catalog-dir", str(catalog_dir))
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err


def test_missed_deadline_exits_1_with_reasons(
    capsys: pytest.CaptureFixture[str], catalog_dir: Path
) -> None:
    code, out, err = run(
        capsys, "--params", "70B", "--tokens", "2T", "--deadline", "36h", "--gpus", "8-64",
        "--catalog-dir", str(catalog_dir),
    )  # fmt: skip
    assert code == 1
    assert "past the deadline of 36.0 h" in err
    code, out, _ = run(
        capsys, "--params", "70B", "--tokens", "2T", "--deadline", "36h", "--gpus", "8-64",
        "--json", "--catalog-dir", str(catalog_dir),
    )  # fmt: skip
    data = json.loads(out)
    assert code == 1 and data["options"] == []
    assert all(item["reasons"] for item in data["infeasible"])


def test_memory_misfit_says_what_would_fit(
    capsys: pytest.CaptureFixture[str], catalog_dir: Path
) -> None:
    code, _, err = run(
        capsys, "--params", "7B", "--tokens", "1B", "--gpu", "A10G", "--gpus", "1",
        "--catalog-dir", str(catalog_dir),
    )  # fmt: skip
    assert code == 1
    assert "memory: 1 x A10G needs" in err and "has 24 GiB" in err
    assert "more GPUs: at least 8 x A10G" in err


def test_table_explain_and_currency(capsys: pytest.CaptureFixture[str], catalog_dir: Path) -> None:
    code, out, _ = run(
        capsys, "--params", "7B", "--tokens", "1T", "--gpu", "H100", "--gpus", "8,64",
        "--explain", "--currency", "EUR", "--fx", "0.5", "--catalog-dir", str(catalog_dir),
    )  # fmt: skip
    assert code == 0
    goodput = f"goodput {DEFAULT_GOODPUT:.0%}"
    for needle in ("GPU-h", "cost EUR", "Pareto", "Assumptions:", goodput, "spot:",
                   "reserved:", "Idle: at 60% utilisation", "Option 1:", "MFU = ",
                   "compute time = ", "FLOPs dense = 6 x"):  # fmt: skip
        assert needle in out, needle


def test_csv_has_one_row_per_option(capsys: pytest.CaptureFixture[str], catalog_dir: Path) -> None:
    code, out, _ = run(
        capsys, "--params", "7B", "--tokens", "100B", "--gpu", "H100", "--gpus", "8",
        "--csv", "--catalog-dir", str(catalog_dir),
    )  # fmt: skip
    lines = out.strip().splitlines()
    assert code == 0 and lines[0].startswith("rank,gpu,gpus,nodes,provider")
    assert len(lines) > 2


def test_job_file_fills_unset_flags(
    capsys: pytest.CaptureFixture[str], catalog_dir: Path, tmp_path: Path
) -> None:
    job = tmp_path / "job.yaml"
    job.write_text("params: 7B\ntokens: 1T\ngpu: [H100]\ngpus: 64\n", encoding="utf-8")
    code, out, _ = run(capsys, "--job", str(job), "--json", "--catalog-dir", str(catalog_dir))
    assert code == 0
    assert {o["gpus"] for o in json.loads(out)["options"]} == {64}
    job.write_text("params: 7B\nwat: 1\n", encoding="utf-8")
    code, _, err = run(capsys, "--job", str(job), "--catalog-dir", str(catalog_dir))
    assert code == 2 and "unknown key 'wat'" in err
    job.write_text("params: [\n", encoding="utf-8")
    code, _, err = run(capsys, "--job", str(job), "--catalog-dir", str(catalog_dir))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "not valid YAML" in err


def test_default_estimate_loads_no_cloud_sdk_or_tui() -> None:
    """`gpuplan estimate --params 7B --tokens 1T` on the bundled catalog, in a fresh process."""
    script = (
        "import sys, io, contextlib\n"
        "from gpuplan.cli.main import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    code = main(['estimate', '--params', '7B', '--tokens', '1T'])\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules}\n"
        "             & {'boto3', 'botocore', 'google', 'azure', 'textual'})\n"
        "providers = {l.split()[3] for l in out.getvalue().splitlines()[2:12] if l[:3].strip()}\n"
        "print(code, bad, sorted(providers))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split("[")[0].strip() == "0"
    assert "[]" in done.stdout  # no forbidden module
    out = subprocess.run(
        [sys.executable, "-m", "gpuplan", "estimate", "--params", "7B", "--tokens", "1T",
         "--json", "--top", "200", "--include-stale"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    providers = {o["provider"] for o in json.loads(out)["options"]}
    assert {"aws", "gcp", "azure", "lambda", "nebius", "runpod"} <= providers


@pytest.mark.parametrize(("method", "noticed"), [("pretrain", True), ("lora", False)])
def test_few_tokens_notice_is_for_pretraining_only(
    capsys: pytest.CaptureFixture[str], catalog_dir: Path, method: str, noticed: bool
) -> None:
    """Fewer tokens than parameters is odd for pre-training, normal for a fine-tune."""
    code, _, err = run(
        capsys, "--params", "7B", "--tokens", "100M", "--method", method, "--gpu", "H100",
        "--gpus", "8", "--json", "--catalog-dir", str(catalog_dir),
    )  # fmt: skip
    assert code == 0
    assert ("fewer than --params" in err) is noticed
