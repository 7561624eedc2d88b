"""Loading the catalog: validation errors name file, line and field; notices go out as values."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.core.catalog.offers import PricingModel, Provider
from gpuplan.core.errors import DataError
from gpuplan.loaders.catalog import load_catalog
from tests.conftest import SMALL_AWS, write_catalog

GOOD = SMALL_AWS[0]


def _aws_row(**changes: str) -> str:
    cells = GOOD.split(",")
    columns = [
        "instance_type", "region", "gpu", "gpu_count", "gpu_memory_gb", "vcpus", "memory_gb",
        "interconnect", "network_gbps", "on_demand_hourly", "spot_hourly", "spot_zone",
        "reserved_1y_hourly", "reserved_3y_hourly", "as_of", "source",
    ]  # fmt: skip
    for key, value in changes.items():
        cells[columns.index(key)] = value
    return ",".join(cells)


def test_small_catalog_loads(small_catalog: Path) -> None:
    catalog = load_catalog(small_catalog)
    assert {o.provider for o in catalog.offers} == {Provider.AWS, Provider.GCP, Provider.AZURE}
    p5 = next(o for o in catalog.offers if o.instance_type == "p5.48xlarge")
    assert p5.on_demand_hourly == Decimal("55.04")
    assert p5.price(PricingModel.SPOT) == Decimal("30.10")
    assert p5.spot_zone == "use1-az4"


def test_gcp_price_is_host_plus_accelerators(small_catalog: Path) -> None:
    catalog = load_catalog(small_catalog)
    a2 = next(o for o in catalog.offers if o.instance_type == "a2-highgpu-1g")
    assert a2.on_demand_hourly == Decimal("3.673")
    assert a2.parts is not None
    assert a2.parts[PricingModel.ON_DEMAND].host == Decimal("0.739")
    assert a2.parts[PricingModel.ON_DEMAND].accelerators == Decimal("2.934")
    assert a2.reserved_1y_hourly is None


@pytest.mark.parametrize(
    ("row", "field", "needle"),
    [
        (_aws_row(on_demand_hourly="0"), "on_demand_hourly", "positive price"),
        (_aws_row(on_demand_hourly="-3"), "on_demand_hourly", "positive price"),
        (_aws_row(spot_hourly="700.0"), "spot_hourly", "placeholder"),
        (_aws_row(spot_hourly="12000"), "spot_hourly", "placeholder"),
        (_aws_row(on_demand_hourly="cheap"), "on_demand_hourly", "expected a price"),
        (_aws_row(gpu="H1000"), "gpu", "close matches: H100"),
        (_aws_row(gpu="h100-sxm"), "gpu", "canonical name 'H100'"),
        (_aws_row(gpu_count="0"), "gpu_count", "must be above 0 and at most 72"),
        (_aws_row(gpu_count="eight"), "gpu_count", "number"),
        (_aws_row(as_of="yesterday"), "as_of", "date"),
    ],
)
def test_bad_cells_name_file_line_and_field(
    tmp_path: Path, row: str, field: str, needle: str
) -> None:
    root = write_catalog(tmp_path, aws=[SMALL_AWS[1], row])
    with pytest.raises(DataError) as err:
        load_catalog(root)
    message = str(err.value)
    assert message.startswith(f"{root / 'aws.csv'}:3: {field}: "), message
    assert needle in message
    assert err.value.line == 3


def test_duplicate_offer_key_is_rejected(tmp_path: Path) -> None:
    root = write_catalog(tmp_path, aws=[GOOD, SMALL_AWS[1], GOOD])
    with pytest.raises(DataError, match=r"aws.csv:4: instance_type: duplicate offer .*line 2"):
        load_catalog(root)


def test_wrong_cell_count_and_broken_quotes(tmp_path: Path) -> None:
    root = write_catalog(tmp_path, aws=[GOOD + ",extra"])
    with pytest.raises(DataError, match=r"aws.csv:2: expected 16 cells"):
        load_catalog(root)
    root = write_catalog(tmp_path / "b", aws=['p5.48xlarge,"us-east-1,H100'])
    with pytest.raises(DataError, match=r"aws.csv"):
        load_catalog(root)


def test_binary_garbage_and_empty_file(tmp_path: Path) -> None:
    root = write_catalog(tmp_path)
    (root / "gcp.csv").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
    with pytest.raises(DataError, match=r"gcp.csv: not UTF-8|gcp.csv: binary"):
        load_catalog(root)
    (root / "gcp.csv").write_text("", encoding="utf-8")
    with pytest.raises(DataError, match=r"gcp.csv: empty file"):
        load_catalog(root)


def test_unknown_and_missing_columns(tmp_path: Path) -> None:
    root = write_catalog(tmp_path)
    text = (root / "azure.csv").read_text(encoding="utf-8")
    (root / "azure.csv").write_text(text.replace("vcpus", "cpus", 1), encoding="utf-8")
    with pytest.raises(DataError, match=r"azure.csv:1: header lacks column\(s\) vcpus"):
        load_catalog(root)


def test_gcp_half_a_price_is_an_error(tmp_path: Path) -> None:
    row = (
        "a2-highgpu-1g,us-central1,A100-40GB,1,40,12,85,NVLink,24,0.739,,0.29,1.17,,,,,"
        "us-central1-a,2026-12-01,test"
    )
    root = write_catalog(tmp_path, gcp=[row])
    with pytest.raises(DataError, match=r"gcp.csv:2: gpu_on_demand_hourly: host and GPU"):
        load_catalog(root)


def test_spot_at_or_above_on_demand_is_a_notice_not_an_error(tmp_path: Path) -> None:
    root = write_catalog(tmp_path, aws=[_aws_row(spot_hourly="55.04"), SMALL_AWS[1]])
    catalog = load_catalog(root)
    assert len(catalog.offers) == 7
    assert any("spot >= on-demand (lines 2)" in n for n in catalog.notices)


def test_stale_notice_depends_on_now_argument(small_catalog: Path) -> None:
    fresh = load_catalog(small_catalog, now=datetime(2027, 1, 15, tzinfo=UTC))
    assert not any("days old" in n for n in fresh.notices)
    stale = load_catalog(small_catalog, now=datetime(2027, 6, 1, tzinfo=UTC))
    assert sum("days old" in n for n in stale.notices) == 3
    assert load_catalog(small_catalog).notices == ()


def test_catalog_as_of_is_the_oldest_row(tmp_path: Path) -> None:
    root = write_catalog(tmp_path, aws=[_aws_row(as_of="2026-10-01"), SMALL_AWS[1]])
    assert load_catalog(root).as_of is not None
    assert load_catalog(root).as_of.isoformat() == "2026-10-01"  # type: ignore[union-attr]
