"""``gpuplan catalog`` and ``gpuplan gpus`` through the real entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.loaders.gpu_specs import load_gpu_table
from gpuplan.loaders.paths import bundled_pricing_dir

OFFER_KEYS = {
    "provider", "instance_type", "region", "gpu", "gpu_count", "gpu_memory_gb", "vcpus",
    "memory_gb", "on_demand_hourly", "spot_hourly", "reserved_1y_hourly",
    "reserved_3y_hourly", "as_of",
}  # fmt: skip


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, object]]:
    assert main(list(argv)) == 0
    data = json.loads(capsys.readouterr().out)
    assert isinstance(data, list)
    return data


def test_json_offers_for_h100_from_all_providers(
    small_catalog: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    offers = run_json(
        capsys, "catalog", "--gpu", "H100", "--json", "--catalog-dir", str(small_catalog)
    )
    assert {o["provider"] for o in offers} == {"aws", "gcp", "azure"}
    for offer in offers:
        assert offer.keys() >= OFFER_KEYS
        assert offer["gpu"] == "H100"
        assert isinstance(offer["on_demand_hourly"], float)
    azure = next(o for o in offers if o["provider"] == "azure")
    assert azure["spot_hourly"] is None
    gcp = next(o for o in offers if o["provider"] == "gcp")
    assert gcp["on_demand_hourly"] == pytest.approx(43.07)


def test_spot_sort_is_ascending_and_only_spot(
    small_catalog: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    offers = run_json(
        capsys, "catalog", "--pricing", "spot", "--sort", "price", "--json",
        "--catalog-dir", str(small_catalog),
    )  # fmt: skip
    prices = [o["spot_hourly"] for o in offers]
    assert prices and None not in prices
    assert prices == sorted(prices)  # type: ignore[type-var]
    assert "Standard_ND96isr_H100_v5" not in {o["instance_type"] for o in offers}


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--provider", "gcp"], {"a2-highgpu-1g", "a2-ultragpu-1g", "a3-highgpu-8g"}),
        (["--gpus", "8", "--provider", "aws"], {"p5.48xlarge", "p4de.24xlarge"}),
        (["--min-gpus", "2", "--region", "eastus"], {"Standard_ND96isr_H100_v5"}),
        (
            ["--gpu", "a100-80gb,A10", "--max-hourly", "5"],
            {"a2-ultragpu-1g", "Standard_NV6ads_A10_v5"},
        ),
        (["--pricing", "reserved_3y"], {"p5.48xlarge", "g5.xlarge", "Standard_ND96isr_H100_v5"}),
    ],
)
def test_filters(
    small_catalog: Path, capsys: pytest.CaptureFixture[str], flags: list[str], expected: set[str]
) -> None:
    offers = run_json(capsys, "catalog", *flags, "--json", "--catalog-dir", str(small_catalog))
    assert {o["instance_type"] for o in offers} == expected


def test_tflops_per_dollar_sort_puts_best_value_first(
    small_catalog: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    offers = run_json(
        capsys,
        "catalog",
        "--sort",
        "tflops-per-dollar",
        "--json",
        "--catalog-dir",
        str(small_catalog),
    )
    values = [o["bf16_tflops_per_dollar"] for o in offers]
    assert values == sorted(values, reverse=True)  # type: ignore[type-var]


def test_table_shows_as_of_and_fractional_gpus(
    small_catalog: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["catalog", "--provider", "azure", "--catalog-dir", str(small_catalog)]) == 0
    out = capsys.readouterr().out
    assert "as of 2026-12-01" in out
    assert "0.1667x A10" in out
    assert "98.32" in out


def test_csv_output(small_catalog: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "--csv", "--gpu", "A10G", "--catalog-dir", str(small_catalog)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("provider,instance_type,region,gpu")
    assert lines[1].startswith("aws,g5.xlarge,us-east-1,A10G,1")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["catalog", "--gpu", "H1000"], "close matches: H100"),
        (["catalog", "--gpu", "A100"], "ambiguous"),
        (["catalog", "--provider", "oracle"], "unknown provider"),
        (["catalog", "--pricing", "cheap"], "unknown pricing model"),
        (["catalog", "--max-hourly", "lots"], "--max-hourly"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    small_catalog: Path, capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    assert main([*argv, "--catalog-dir", str(small_catalog)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert needle in err[0]


def test_nonsense_flag_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["catalog", "--colour", "blue"])
    assert exit_.value.code == 2
    assert "unrecognized arguments: --colour" in capsys.readouterr().err


def test_gpus_listing(capsys: pytest.CaptureFixture[str]) -> None:
    specs = run_json(capsys, "gpus", "--json")
    assert sorted(s["name"] for s in specs) == sorted(load_gpu_table(bundled_pricing_dir()).names)
    h100 = next(s for s in specs if s["name"] == "H100")
    assert h100["bf16_tflops"] == pytest.approx(989.4)
    assert main(["gpus", "--gpu", "nvidia-tesla-a100"]) == 0
    assert "A100-40GB" in capsys.readouterr().out


def _run_cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuplan", *argv], capture_output=True, text=True, timeout=60
    )


def test_corrupted_catalog_file_exits_2_without_traceback(small_catalog: Path) -> None:
    aws = small_catalog / "aws.csv"
    lines = aws.read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace("27.45", "27..45")
    aws.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = _run_cli("catalog", "--catalog-dir", str(small_catalog))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert f"{aws}:3: on_demand_hourly: expected a price" in result.stderr
    assert result.stdout == ""


def test_catalog_loads_no_cloud_sdk_or_tui(small_catalog: Path) -> None:
    probe = (
        "import contextlib, io, sys\n"
        "from gpuplan.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    rc = main(['catalog', '--json', '--catalog-dir', {str(small_catalog)!r}])\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in "
        "('boto3', 'botocore', 'azure', 'textual', 'rich', 'pydantic') "
        "or m.startswith('google.cloud')]\n"
        "print(rc, sorted(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0 []"
