"""The fast catalog reader (estimate path) agrees with the validated one: same offers, same
GPUs, same notices, and the validated reader's exact error for every bad file."""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gpuplan.core.catalog.gpus import GpuSpec
from gpuplan.core.catalog.offers import Offer
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.errors import DataError
from gpuplan.loaders import catalog_files, gpu_specs
from gpuplan.loaders.catalog import load_catalog
from tests.conftest import SMALL_AWS, SMALL_GCP, write_catalog
from tests.loaders.test_catalog_loader import _aws_row

NOW = datetime(2027, 6, 1, tzinfo=UTC)


def _typed(value: Any) -> Any:
    """A value with its type, so that 8 and 8.0 (or "8") do not pass for each other."""
    if isinstance(value, dict):  # price parts, or the per-model price dates
        return {
            k: (_typed(v.host), _typed(v.accelerators)) if hasattr(v, "host") else _typed(v)
            for k, v in value.items()
        }
    return (type(value).__name__, str(value), value)


def _names(kind: type[Any]) -> list[str]:
    return [f.name for f in fields(kind)]


def _offer_fields(offer: Any) -> dict[str, Any]:
    return {name: _typed(getattr(offer, name)) for name in _names(Offer)}


def assert_same(fast: Catalog, slow: Catalog) -> None:
    assert [_offer_fields(o) for o in fast.offers] == [_offer_fields(o) for o in slow.offers]
    assert [o.key for o in fast.offers] == [o.key for o in slow.offers]
    assert fast.notices == slow.notices
    assert fast.gpus.names == slow.gpus.names
    for spec in slow.gpus:
        row = fast.gpus.get(spec.name)
        for name in _names(GpuSpec):
            assert _typed(getattr(row, name)) == _typed(getattr(spec, name)), (spec.name, name)
    for spelling in ("h100-sxm", "nvidia-tesla-a100", "A100-80GB", "a100", "nvidia h100_80gb"):
        found, expected = fast.gpus.lookup(spelling), slow.gpus.lookup(spelling)
        assert (found and found.name) == (expected and expected.name)


def _no_validated_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the validated readers fail, so that a silent fall-back to them shows."""

    def refuse(*args: object, **kwargs: object) -> Any:
        raise AssertionError("the fast reader fell back to the validated one")

    monkeypatch.setattr(catalog_files, "load_provider_file", refuse)
    monkeypatch.setattr(gpu_specs, "load_gpu_table", refuse)


def test_bundled_catalog_fast_and_validated_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    slow = load_catalog(now=NOW)
    with monkeypatch.context() as patch:
        # The fast reader really reads every file (no silent fall-back to the validated one).
        _no_validated_reader(patch)
        fast = load_catalog(now=NOW, fast=True)
    assert len(fast.offers) > 500
    # One row type for both readers.
    assert all(type(o) is Offer for o in (*fast.offers, *slow.offers))
    assert all(type(spec) is GpuSpec for spec in (*fast.gpus, *slow.gpus))
    assert_same(fast, slow)


def test_small_catalog_with_parts_fractions_and_notices_agrees(tmp_path: Path) -> None:
    root = write_catalog(tmp_path, aws=[_aws_row(spot_hourly="55.04"), SMALL_AWS[1]])
    fast, slow = load_catalog(root, now=NOW, fast=True), load_catalog(root, now=NOW)
    assert any("spot >= on-demand" in n for n in fast.notices)
    assert any(o.parts for o in fast.offers)
    assert_same(fast, slow)


BAD_AWS = [
    _aws_row(on_demand_hourly="0"),
    _aws_row(on_demand_hourly="-3"),
    _aws_row(spot_hourly="700.0"),
    _aws_row(spot_hourly="12000"),
    _aws_row(on_demand_hourly="cheap"),
    _aws_row(on_demand_hourly="1e400"),
    _aws_row(on_demand_hourly="NaN"),
    _aws_row(gpu="H1000"),
    _aws_row(gpu="h100-sxm"),
    _aws_row(gpu_count="0"),
    _aws_row(gpu_count="eight"),
    _aws_row(vcpus="96.5"),
    _aws_row(as_of="yesterday"),
    _aws_row(as_of="2026-13-01"),
    _aws_row(instance_type=""),
    _aws_row(on_demand_hourly="", spot_hourly="", reserved_1y_hourly="", reserved_3y_hourly=""),
    SMALL_AWS[0] + ",extra",
    SMALL_AWS[0],  # a duplicate of the first row
    'p5.48xlarge,"us-east-1,H100',
]


@pytest.mark.parametrize("row", BAD_AWS)
def test_bad_rows_get_the_validated_error(tmp_path: Path, row: str) -> None:
    root = write_catalog(tmp_path, aws=[SMALL_AWS[0], SMALL_AWS[1], row])
    with pytest.raises(DataError) as slow:
        load_catalog(root)
    with pytest.raises(DataError) as fast:
        load_catalog(root, fast=True)
    assert str(fast.value) == str(slow.value)


def test_bad_gcp_parts_and_bad_files_get_the_validated_error(tmp_path: Path) -> None:
    half = SMALL_GCP[0].replace("0.739,2.934,", "0.739,,", 1)
    both = SMALL_GCP[0].replace(",,,,,", ",,,,1.0,", 1)
    roots = [write_catalog(tmp_path / name, gcp=[row]) for name, row in (("h", half), ("b", both))]
    garbage = write_catalog(tmp_path / "garbage")
    (garbage / "gcp.csv").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    empty = write_catalog(tmp_path / "empty")
    (empty / "azure.csv").write_text("", encoding="utf-8")
    header = write_catalog(tmp_path / "header")
    text = (header / "aws.csv").read_text(encoding="utf-8")
    (header / "aws.csv").write_text(text.replace("vcpus", "cpus", 1), encoding="utf-8")
    gpus = write_catalog(tmp_path / "gpus")
    toml = (gpus / "gpus.toml").read_text(encoding="utf-8")
    (gpus / "gpus.toml").write_text(toml.replace("memory_gb = 16", 'memory_gb = "x"', 1))
    for root in (*roots, garbage, empty, header, gpus):
        with pytest.raises(DataError) as slow:
            load_catalog(root)
        with pytest.raises(DataError) as fast:
            load_catalog(root, fast=True)
        assert str(fast.value) == str(slow.value), root


def test_unusual_but_valid_cells_fall_back_and_agree(tmp_path: Path) -> None:
    """Cells the fast reader leaves to the validator (exponents, spaces, a blank line)."""
    rows = [_aws_row(on_demand_hourly=" 55.040 ", network_gbps="3.2e3"), "", SMALL_AWS[1]]
    root = write_catalog(tmp_path, aws=rows)
    assert_same(load_catalog(root, now=NOW, fast=True), load_catalog(root, now=NOW))


def test_a_row_built_in_code_has_the_readers_types() -> None:
    """A cloud API or a test may pass ``80`` or ``8.0``: the row holds what both readers
    give (a whole GPU count an int, sizes floats), so files and JSON read the same."""
    from datetime import date

    from gpuplan.core.catalog.offers import Provider

    offer = Offer(
        provider=Provider.AWS, instance_type="p5.48xlarge", region="us-east-1", gpu="H100",
        gpu_count=8.0, gpu_memory_gb=80, vcpus=192, memory_gb=2048, network_gbps=3200,
        as_of=date(2026, 12, 1), source="test",
    )  # fmt: skip
    assert _typed(offer.gpu_count) == ("int", "8", 8)
    assert [_typed(v) for v in (offer.gpu_memory_gb, offer.memory_gb, offer.network_gbps)] == [
        ("float", "80.0", 80.0),
        ("float", "2048.0", 2048.0),
        ("float", "3200.0", 3200.0),
    ]
