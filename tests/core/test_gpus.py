"""The GPU spec table: canonical names, aliases resolving to exactly one part, dense peaks."""

from __future__ import annotations

import pytest

from gpuplan.core.catalog.gpus import GpuTable, Precision
from gpuplan.core.errors import InputError
from gpuplan.loaders.gpu_specs import load_gpu_table
from gpuplan.loaders.paths import bundled_pricing_dir

CANONICAL = [
    "P100", "T4", "V100-16GB", "V100-32GB", "A10G", "A10", "L4", "L40S", "A100-40GB",
    "A100-80GB", "H100", "H100-PCIe", "H100-NVL", "H200", "B200", "B300", "GB200", "GB300",
    "MI300X", "MI325X", "MI355X", "H800", "A800-80GB", "GH200", "MI250X",
]  # fmt: skip


@pytest.fixture(scope="module")
def table() -> GpuTable:
    return load_gpu_table(bundled_pricing_dir())


def test_exactly_the_canonical_names(table: GpuTable) -> None:
    assert sorted(table.names) == sorted(CANONICAL)


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [
        ("h100-sxm", "H100"),
        ("H100-80GB", "H100"),
        ("nvidia-h100-80gb", "H100"),
        ("NVIDIA H100 80GB", "H100"),
        ("nvidia-h100-mega-80gb", "H100"),
        ("h100_pcie", "H100-PCIe"),
        ("H100 NVL", "H100-NVL"),
        ("a100 80gb", "A100-80GB"),
        ("nvidia-a100-80gb", "A100-80GB"),
        ("nvidia-tesla-a100", "A100-40GB"),
        ("nvidia-tesla-t4", "T4"),
        ("nvidia-tesla-v100", "V100-16GB"),
        ("nvidia-tesla-p100", "P100"),
        ("nvidia-l4", "L4"),
        ("nvidia-h200-141gb", "H200"),
        ("nvidia-b200", "B200"),
        ("amd instinct mi300x", "MI300X"),
        ("h800", "H800"),
        ("A800", "A800-80GB"),
        ("nvidia-a800-sxm4-80gb", "A800-80GB"),
        ("GH200", "GH200"),
        ("AMD Instinct MI250X", "MI250X"),
        ("a10g", "A10G"),
        ("A10", "A10"),
    ],
)
def test_aliases_resolve_to_one_canonical_name(table: GpuTable, alias: str, canonical: str) -> None:
    assert table.resolve(alias).name == canonical


def test_h100_never_includes_pcie_or_nvl(table: GpuTable) -> None:
    h100 = table.resolve("H100")
    assert h100.form_factor == "SXM5"
    assert h100.memory_gb == 80
    assert table.resolve("h100-nvl").memory_gb == 94
    assert table.resolve_many(["H100"]) == ["H100"]


@pytest.mark.parametrize("name", ["A100", "v100"])
def test_bare_names_that_mean_two_parts_are_refused(table: GpuTable, name: str) -> None:
    with pytest.raises(InputError, match="ambiguous"):
        table.resolve(name)


def test_unknown_name_suggests_close_matches(table: GpuTable) -> None:
    with pytest.raises(InputError) as err:
        table.resolve("H1000")
    assert "close matches" in str(err.value)
    assert "H100" in str(err.value)


def test_dense_not_sparse_peaks(table: GpuTable) -> None:
    # Datasheets print sparse figures with an asterisk; the table must hold dense ones.
    assert table.get("H100").peak_tflops(Precision.BF16) == pytest.approx(989.4)
    assert table.get("A100-80GB").peak_tflops(Precision.BF16) == 312
    assert table.get("MI300X").peak_tflops(Precision.FP16) == pytest.approx(1307.4)
    assert table.get("B200").peak_tflops(Precision.FP8) == 4500


def test_missing_paths_are_none(table: GpuTable) -> None:
    for name in ("T4", "V100-16GB", "V100-32GB", "P100"):
        assert table.get(name).peak_tflops(Precision.BF16) is None
    assert table.get("A100-40GB").peak_tflops(Precision.FP8) is None
    assert table.get("T4").peak_tflops(Precision.FP16) == 65


def test_every_row_has_a_source(table: GpuTable) -> None:
    for spec in table:
        assert spec.source.strip()
        assert spec.memory_gb > 0 and spec.memory_bandwidth_tbs > 0
        assert 2014 <= spec.launch_year <= 2026
