"""`gpuplan catalog import --format skypilot DIR` over small vms.csv files with real traps."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.catalog.offers import Offer, PricingModel
from gpuplan.loaders.catalog import load_catalog
from gpuplan.providers.aws.facts import is_local_zone
from tests.conftest import SMALL_AZURE, write_catalog

DATA = Path(__file__).parent / "data" / "skypilot"


@pytest.fixture
def target(tmp_path: Path) -> Path:
    return write_catalog(tmp_path / "catalog", azure=SMALL_AZURE[:1])


def _offers(directory: Path) -> dict[tuple[str, str, str], Offer]:
    return {o.key: o for o in load_catalog(directory).offers}


def test_import_combines_gcp_rows_and_skips_traps(
    target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["catalog", "import", "--format", "skypilot", str(DATA), "--catalog-dir", str(target)]
    code = main([*argv, "--force", "--json"])
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert code == 0, out
    offers = _offers(target)

    p5 = offers[("aws", "p5.48xlarge", "us-east-1")]
    # The Local Zone's 10.24 is not the region's spot price.
    assert (p5.spot_hourly, p5.spot_zone) == (Decimal("17.628900"), "use1-az6")
    assert p5.on_demand_hourly == Decimal("55.04")
    g5 = offers[("aws", "g5.xlarge", "us-east-1")]
    assert (g5.spot_hourly, g5.spot_zone) == (Decimal("0.424600"), "use1-az2")
    p5e = offers[("aws", "p5e.48xlarge", "us-east-2")]
    assert (p5e.gpu, p5e.gpu_count, p5e.on_demand_hourly) == ("H200", 8, None)
    assert not any(k[1].startswith("g5g") for k in offers)
    assert "T4G (1 rows)" in out.err

    a2 = offers[("gcp", "a2-highgpu-1g", "us-central1")]
    assert a2.on_demand_hourly == Decimal("3.67339")
    assert a2.parts is not None
    assert a2.parts[PricingModel.ON_DEMAND].host == Decimal("0.73948")
    assert a2.parts[PricingModel.SPOT].accelerators == Decimal("1.4341")
    assert offers[("gcp", "g2-standard-4", "us-central1")].on_demand_hourly == Decimal("0.70683")
    n1 = offers[("gcp", "n1-standard-8+1xT4", "us-central1")]
    assert (n1.gpu, n1.gpu_count, n1.on_demand_hourly) == ("T4", 1, Decimal("0.73"))
    # a4-highgpu-8g's host reads 0.0 upstream: a placeholder, dropped, not priced as GPUs only.
    assert ("gcp", "a4-highgpu-8g", "us-central1") not in offers
    gcp = next(p for p in report["providers"] if p["provider"] == "gcp")
    assert any("a4-highgpu-8g" in p["message"] for p in gcp["problems"])

    nd = offers[("azure", "Standard_ND96isr_H100_v5", "eastus")]
    assert nd.gpu_count == 8  # the catalog's shape, not SkyPilot's 12
    assert "lists 12 GPUs, the catalog 8" in out.err
    azure = next(p for p in report["providers"] if p["provider"] == "azure")
    assert any("spot 98.32 >= on-demand 98.32" in p["message"] for p in azure["problems"])
    assert offers[("azure", "Standard_NC24ads_A100_v4", "westus")].on_demand_hourly == Decimal(
        "4.775"
    )
    assert {o.source for k, o in offers.items() if k[0] == "azure"} == {"SkyPilot catalog import"}


def test_import_refuses_to_drop_many_offers_without_force(
    target: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (target / "aws.csv").read_bytes()
    argv = ["catalog", "import", "--format", "skypilot", str(DATA), "--catalog-dir", str(target)]
    assert main([*argv, "--provider", "aws"]) == 1
    assert "would vanish" in capsys.readouterr().out  # p4de.24xlarge is not in the file
    assert (target / "aws.csv").read_bytes() == before


def test_import_of_a_folder_without_vms_csv_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["catalog", "import", "--format", "skypilot", str(tmp_path)])
    assert code == 2
    assert "no SkyPilot vms.csv found" in capsys.readouterr().err


def test_not_a_skypilot_file_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "aws.csv").write_text("instance_type,region\np5.48xlarge,us-east-1\n")
    assert main(["catalog", "import", "--format", "skypilot", str(tmp_path)]) == 2
    assert "not a SkyPilot vms.csv: lacks InstanceType" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("zone", "region", "local"),
    [
        ("use1-az1", "us-east-1", False),
        ("use1-atl2-az1", "us-east-1", True),
        ("usw2-lax1-az2", "us-west-2", True),
        ("us-east-1a", "us-east-1", False),
        ("us-west-2-lax-1a", "us-west-2", True),
    ],
)
def test_local_zones_are_told_apart(zone: str, region: str, local: bool) -> None:
    assert is_local_zone(zone, region) is local
