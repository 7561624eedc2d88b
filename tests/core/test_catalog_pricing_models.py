"""Pricing models beyond the four: capacity blocks, DWS Flex-start and calendar mode.

Their rules (block length, lead time) live in core/offers; the catalog files carry them as
extra price columns, the catalog filters and prices by them, and the planner charges the
whole block a job has to buy.
"""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.catalog.offers import PricingModel, Provider
from gpuplan.loaders.catalog import load_catalog
from gpuplan.loaders.catalog_files import load_provider_file
from gpuplan.loaders.catalog_writer import provider_csv, write_provider_file
from gpuplan.usecases.catalog.lookup import parse_pricing
from tests.conftest import AWS_HEADER, GCP_HEADER, SMALL_AZURE, SMALL_GCP

AWS = [
    "p5.48xlarge,us-east-1,H100,8,80,192,2048,NVLink,3200,55.04,,,,,,2026-12-01,test",
    "p6e-gb200.36xlarge,us-east-1,GB200,4,186,144,960,NVLink,1600,,,,,,61.2,2026-12-01,test",
]


@pytest.mark.parametrize(
    ("model", "hours", "billed"),
    [
        (PricingModel.CAPACITY_BLOCK, 30.0, 48),
        (PricingModel.CAPACITY_BLOCK, 0.5, 24),
        (PricingModel.CAPACITY_BLOCK, 24.0, 24),
        (PricingModel.DWS_CALENDAR, 72.1, 96),
        (PricingModel.FLEX_START, 3.2, 4),
    ],
)
def test_block_rules_round_up_to_whole_blocks(
    model: PricingModel, hours: float, billed: int
) -> None:
    rules = model.rules
    assert rules is not None and rules.source
    assert rules.billed_hours(hours) == billed


def test_base_models_have_no_block_rules() -> None:
    assert all(
        m.rules is None
        for m in (PricingModel.ON_DEMAND, PricingModel.SPOT, PricingModel.RESERVED_1Y)
    )
    assert PricingModel.CAPACITY_BLOCK.rules is not None
    assert PricingModel.CAPACITY_BLOCK.rules.lead_days == 56
    assert PricingModel.FLEX_START.rules is not None
    assert PricingModel.FLEX_START.rules.lead_days is None  # queued, not booked


def test_parse_pricing_knows_the_new_names() -> None:
    assert parse_pricing("capacity-block") is PricingModel.CAPACITY_BLOCK
    assert parse_pricing("flex_start") is PricingModel.FLEX_START
    assert parse_pricing("dws_calendar") is PricingModel.DWS_CALENDAR


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    root = tmp_path / "catalog"
    root.mkdir()
    from gpuplan.loaders.paths import bundled_pricing_dir

    (root / "gpus.toml").write_bytes((bundled_pricing_dir() / "gpus.toml").read_bytes())
    header = AWS_HEADER.replace(",as_of", ",capacity_block_hourly,as_of")
    (root / "aws.csv").write_text("\n".join([header, *AWS]) + "\n", encoding="utf-8")
    (root / "gcp.csv").write_text("\n".join([GCP_HEADER, *SMALL_GCP]) + "\n", encoding="utf-8")
    (root / "azure.csv").write_text("\n".join([AWS_HEADER, *SMALL_AZURE]) + "\n", encoding="utf-8")
    return root


def test_catalog_lists_an_offer_sold_only_as_a_capacity_block(
    catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["catalog", "--provider", "aws", "--json", "--catalog-dir", str(catalog_dir)]
    assert main([*argv, "--pricing", "capacity_block"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["instance_type"], row["capacity_block_hourly"]) == ("p6e-gb200.36xlarge", 61.2)
    assert row["on_demand_hourly"] is None
    assert main(argv) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2


def test_estimate_charges_whole_capacity_blocks(
    catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["estimate", "--params", "1B", "--tokens", "20B", "--gpu", "GB200", "--gpus", "4"]
    argv += ["--pricing", "capacity_block", "--json", "--catalog-dir", str(catalog_dir)]
    assert main(argv) == 0
    record = json.loads(capsys.readouterr().out)
    (option,) = record["options"]
    assert option["pricing"] == "capacity_block"
    hours = option["hours"]
    days = -(-hours // 24)  # whole days bought
    assert Decimal(str(option["cost_usd"])) == pytest.approx(
        Decimal("61.2") * Decimal(days * 24), rel=Decimal("0.0001")
    )
    assert hours < days * 24  # the block is longer than the job: the rest is paid anyway
    assert any("capacity_block:" in n and "h billed" in n for n in option["notes"])


def test_writer_mixes_gcp_parts_and_totals(catalog_dir: Path, tmp_path: Path) -> None:
    gpus = load_catalog(catalog_dir).gpus
    offers = load_provider_file(catalog_dir / "gcp.csv", Provider.GCP, gpus).offers
    a4 = replace(
        offers[0],
        **{
            "instance_type": "a4-highgpu-8g",
            "gpu": "B200",
            "gpu_count": 8,
            "on_demand_hourly": None,
            "spot_hourly": None,
            "parts": None,
            "reserved_1y_hourly": Decimal("88.9272"),
            "dws_calendar_hourly": Decimal("90.22"),
        },
    )
    text = provider_csv([*offers, a4])
    header = text.splitlines()[0].split(",")
    assert {"host_on_demand_hourly", "reserved_1y_hourly", "dws_calendar_hourly"} <= set(header)
    assert "capacity_block_hourly" not in header  # unsold block models get no column
    path = write_provider_file(tmp_path / "out", Provider.GCP, [*offers, a4])
    again = {o.instance_type: o for o in load_provider_file(path, Provider.GCP, gpus).offers}
    assert again["a4-highgpu-8g"].dws_calendar_hourly == Decimal("90.22")
    assert again["a4-highgpu-8g"].parts is None
    assert again["a2-highgpu-1g"].parts == offers[0].parts


def test_total_and_parts_together_are_refused(tmp_path: Path, catalog_dir: Path) -> None:
    header = GCP_HEADER.replace(",spot_zone", ",on_demand_hourly,spot_zone")
    row = SMALL_GCP[0].replace(",us-central1-a,", ",3.67,us-central1-a,")
    (catalog_dir / "gcp.csv").write_text(f"{header}\n{row}\n", encoding="utf-8")
    assert main(["catalog", "--catalog-dir", str(catalog_dir)]) == 2
