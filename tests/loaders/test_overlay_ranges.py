"""``--catalog-dir`` overlays pass the range checks ``catalog refresh`` applies (issue 33).

On main an overlay ``aws.csv`` with ``gpu_count`` nan was a traceback, an on-demand
price of 1e-300 ranked p5.48xlarge first at $0.00, and -1 or nan GPU memory, -1 vCPUs,
1e20 GPUs and negative TFLOP/s in ``gpus.toml`` were accepted. Now each is one line
naming the file, line, field and the expected range, exit 2, in ``catalog`` and in
``estimate`` (whose fast reader hands such a file to the validated one).
"""

from __future__ import annotations

import csv
import io
import re
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.catalog.kinds import Provider
from gpuplan.loaders.catalog import load_catalog
from gpuplan.loaders.fast_catalog import NotFast, read_gpus, read_offers
from gpuplan.loaders.paths import bundled_pricing_dir

ROW = ("p5.48xlarge", "us-east-1")

CSV_CASES = {
    "gpu_count nan": ("gpu_count", "nan", "GPU count NaN is not a finite number"),
    "gpu_count 1e20": ("gpu_count", "1e20", "GPU count 1.000E+20 is implausible"),
    "gpu_count 0": ("gpu_count", "0", "GPU count 0 is implausible"),
    "on-demand 1e-300": ("on_demand_hourly", "1e-300", "price per GPU-hour 1.250E-301"),
    "spot 0.001": ("spot_hourly", "0.001", "price per GPU-hour 0.000125 is implausible"),
    "gpu memory -1": ("gpu_memory_gb", "-1", "memory per GPU (GB) -1 is implausible"),
    "gpu memory nan": ("gpu_memory_gb", "nan", "memory per GPU (GB) NaN is not a finite"),
    "vcpus -1": ("vcpus", "-1", "vCPU count -1 is implausible"),
    "memory 1e9": ("memory_gb", "1e12", "host memory (GB) 1.000E+12 is implausible"),
    "network inf": ("network_gbps", "inf", "network bandwidth (Gbit/s) Infinity is not"),
}
RANGES = {
    "gpu_count": "(must be above 0 and at most 72)",
    "on_demand_hourly": "(must be at least $0.01 and at most $1000)",
    "spot_hourly": "(must be at least $0.01 and at most $1000)",
    "gpu_memory_gb": "(must be at least 1 and at most 1024)",
    "vcpus": "(must be at least 1 and at most 2048)",
    "memory_gb": "(must be at least 0.5 and at most 65536)",
    "network_gbps": "(must be at least 0 and at most 100000)",
}


def overlay_csv(folder: Path, column: str, value: str) -> tuple[Path, int]:
    """An overlay ``aws.csv``: the bundled file with one cell of p5.48xlarge changed."""
    folder.mkdir(parents=True, exist_ok=True)
    text = (bundled_pricing_dir() / "aws.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    line = next(n for n, r in enumerate(rows, start=1) if tuple(r[:2]) == ROW)
    rows[line - 1][rows[0].index(column)] = value
    with (folder / "aws.csv").open("w", newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows(rows)
    return folder / "aws.csv", line


COMMANDS = {
    "catalog --sort price": ["catalog", "--sort", "price"],
    "estimate": ["estimate", "--params", "7B", "--tokens", "20B"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", sorted(CSV_CASES))
def test_a_bad_overlay_value_is_one_line_at_its_place(
    case: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    column, value, why = CSV_CASES[case]
    path, line = overlay_csv(tmp_path / "cat", column, value)
    code = main([*COMMANDS[command], "--catalog-dir", str(path.parent)])
    captured = capsys.readouterr()
    assert code == 2, captured.out
    (error,) = captured.err.splitlines()
    assert error.startswith(f"gpuplan: error: {path}:{line}: {column}: "), error
    assert why in error and RANGES[column] in error, error
    assert "p5.48xlarge" not in captured.out  # nothing ranked


@pytest.mark.parametrize("case", sorted(CSV_CASES))
def test_the_fast_reader_leaves_a_bad_value_to_the_validated_one(case: str, tmp_path: Path) -> None:
    column, value, _ = CSV_CASES[case]
    path, _ = overlay_csv(tmp_path / "cat", column, value)
    gpus = load_catalog(None, providers=()).gpus
    with pytest.raises(NotFast):
        read_offers(path, Provider.AWS, gpus, str(path))


def test_the_values_at_the_edges_of_the_ranges_load(tmp_path: Path) -> None:
    folder = tmp_path / "cat"
    overlay_csv(folder, "vcpus", "1")
    path, _ = overlay_csv(folder, "on_demand_hourly", "0.08")  # $0.01 per GPU-hour, 8 GPUs
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    assert any(r[:2] == list(ROW) and r[rows[0].index("vcpus")] == "192" for r in rows)
    for fast in (False, True):
        catalog = load_catalog(folder, fast=fast)
        (offer,) = [o for o in catalog.offers if (o.instance_type, o.region) == ROW]
        assert str(offer.on_demand_hourly) == "0.08"


GPU_CASES = {
    "negative bf16": ("bf16_tflops", "-989", "peak TFLOP/s -989 is implausible"),
    "nan fp8": ("fp8_tflops", "nan", "peak TFLOP/s NaN is not a finite number"),
    "zero bandwidth": ("memory_bandwidth_tbs", "0", "memory bandwidth (TB/s) 0 is implausible"),
    "memory -1": ("memory_gb", "-1", "memory per GPU (GB) -1 is implausible"),
    "nvlink domain 0": ("nvlink_domain", "0", "GPUs in one NVLink domain 0 is implausible"),
}


def overlay_gpus(folder: Path, key: str, value: str) -> tuple[Path, int]:
    """An overlay ``gpus.toml``: the bundled table with the H100's ``key`` set."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = (bundled_pricing_dir() / "gpus.toml").read_text(encoding="utf-8").splitlines()
    start = lines.index('name = "H100"')
    end = next((i for i in range(start, len(lines)) if lines[i] == "[[gpu]]"), len(lines))
    at = next((i for i in range(start, end) if re.match(rf"{key}\s*=", lines[i])), None)
    if at is None:
        lines.insert(start + 1, f"{key} = {value}")
        at = start + 1
    else:
        lines[at] = f"{key} = {value}"
    path = folder / "gpus.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, at + 1


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("case", sorted(GPU_CASES))
def test_a_bad_gpu_table_value_is_one_line_at_its_place(
    case: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key, value, why = GPU_CASES[case]
    path, line = overlay_gpus(tmp_path / "cat", key, value)
    with pytest.raises(NotFast):
        read_gpus(path)
    code = main([*COMMANDS[command], "--catalog-dir", str(path.parent)])
    captured = capsys.readouterr()
    assert code == 2, captured.out
    (error,) = captured.err.splitlines()
    assert error.startswith(f"gpuplan: error: {path}:{line}: gpu[H100].{key}: "), error
    assert why in error and "(must be " in error, error


def test_the_bundled_catalog_passes_every_range() -> None:
    folder = bundled_pricing_dir()
    for fast in (False, True):
        assert load_catalog(folder, fast=fast).offers


SKYPILOT_HEADER = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region"
)


@pytest.mark.parametrize(
    ("count", "vcpus", "memory", "why"),
    [
        ("nan", "192", "2048", "GPU count NaN is not a finite number"),
        ("1e20", "192", "2048", "GPU count 1.000E+20 is implausible"),
        ("8", "-1", "2048", "vCPU count -1 is implausible"),
        ("8", "nan", "2048", "vCPU count NaN is not a finite number"),
        ("8", "192", "0", "host memory (GB) 0 is implausible"),
    ],
)
def test_a_skypilot_import_skips_an_implausible_shape_with_its_reason(
    count: str,
    vcpus: str,
    memory: str,
    why: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = tmp_path / "sky" / "aws"
    source.mkdir(parents=True)
    (source / "vms.csv").write_text(
        f"{SKYPILOT_HEADER}\n"
        f"p5.48xlarge,H100,{count},{vcpus},{memory},55.04,,us-east-1\n"
        "g5.xlarge,A10G,1,4,16,1.006,,us-east-1\n",
        encoding="utf-8",
    )
    target = tmp_path / "catalog"
    argv = ["catalog", "import", "--format", "skypilot", str(source.parent), "--provider", "aws"]
    code = main([*argv, "--catalog-dir", str(target), "--force"])
    err = capsys.readouterr().err
    assert code in (0, 1), err
    assert "Traceback" not in err
    assert f"p5.48xlarge skipped: {why}" in err and "(must be " in err, err
    offers = {
        o.instance_type: o
        for o in load_catalog(target).offers  # the written file passes the same checks
        if o.provider is Provider.AWS and o.region == "us-east-1"
    }
    assert offers["g5.xlarge"].on_demand_hourly == Decimal("1.006")
    p5 = offers.get("p5.48xlarge")  # carried forward from the catalog, never reshaped
    assert p5 is None or (p5.gpu_count, p5.vcpus, p5.memory_gb) == (8, 192, 2048)


def test_skypilot_files_copied_in_do_not_matter(tmp_path: Path) -> None:
    # Only the catalog files are read: a stray file in the overlay folder is ignored.
    folder = tmp_path / "cat"
    folder.mkdir()
    shutil.copy(bundled_pricing_dir() / "aws.csv", folder / "vms.csv")
    assert load_catalog(folder).offers
