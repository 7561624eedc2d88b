"""`gpuplan catalog refresh --provider azure` against a local Retail Prices API server."""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.catalog.offers import Offer, Provider
from gpuplan.loaders.catalog import load_catalog
from gpuplan.providers.azure.retail_prices import ENDPOINT_ENV
from tests.conftest import SMALL_AZURE, write_catalog
from tests.providers.pricing.azure_fake import AzureRetailFake, azure_items, serve

WESTUS = [
    "Standard_NC24ads_A100_v4,westus3,A100-80GB,1,80,24,220,PCIe,,3.673,0.52,,2.31,1.47,"
    "2026-12-01,test",
]


def _azure(directory: Path) -> list[Offer]:
    return [o for o in load_catalog(directory).offers if o.provider is Provider.AZURE]


def _refresh(
    fake: AzureRetailFake, directory: Path, monkeypatch: pytest.MonkeyPatch, *extra: str
) -> int:
    monkeypatch.setenv(ENDPOINT_ENV, fake.endpoint)
    argv = ["catalog", "refresh", "--provider", "azure", "--catalog-dir", str(directory)]
    return main([*argv, *extra])


def _moved(offers: list[Offer], **prices: Decimal) -> list[Offer]:
    nd = {"instance_type": "Standard_ND96isr_H100_v5"}
    return [replace(o, **prices) if o.instance_type == nd["instance_type"] else o
            for o in offers]  # fmt: skip


def test_refresh_writes_new_prices_and_reports_the_move(
    catalog_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _azure(catalog_dir)
    upstream = _moved(old, on_demand_hourly=Decimal("80.00"))
    with serve(AzureRetailFake(azure_items(upstream), page_size=2)) as fake:
        code = _refresh(fake, catalog_dir, monkeypatch)
    out = capsys.readouterr()
    assert code == 0, out.err
    assert len(fake.requests) > 3  # one region, several pages
    new = {o.instance_type: o for o in _azure(catalog_dir)}
    nd = new["Standard_ND96isr_H100_v5"]
    # The Linux consumption meter, not Windows, Dev/Test, Low Priority or non-primary.
    assert nd.on_demand_hourly == Decimal("80.00")
    assert nd.reserved_1y_hourly == Decimal("62.0")
    assert nd.reserved_3y_hourly == Decimal("43.0")
    assert nd.source == "Azure Retail Prices API"
    assert new["Standard_NV6ads_A10_v5"].spot_hourly == Decimal("0.09")
    assert "1 price change," in out.out
    assert "on_demand 98.32 -> 80.0 (-18.6%)" in out.out
    assert "azure eastus: page 2" in out.err


def test_unchanged_upstream_reproduces_the_catalog(
    catalog_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _azure(catalog_dir)
    with serve(AzureRetailFake(azure_items(old))) as fake:
        assert _refresh(fake, catalog_dir, monkeypatch, "--json") == 0
    report = json.loads(capsys.readouterr().out)
    (azure,) = report["providers"]
    assert azure["changed"] == [] and azure["added"] == [] and azure["removed"] == []
    fields = ("on_demand_hourly", "spot_hourly", "reserved_1y_hourly", "reserved_3y_hourly")
    again = {o.key: o for o in _azure(catalog_dir)}
    for offer in old:
        for name in fields:
            assert getattr(again[offer.key], name) == getattr(offer, name)


@pytest.mark.parametrize(
    ("breakage", "needle"),
    [
        ({"fail_pages": {2: 500}}, "page 2: HTTP 500"),
        ({"truncate_pages": {2}}, "page 2: response is not valid JSON"),
        ({"truncate_pages": {1}}, "page 1: response is not valid JSON"),
    ],
)
def test_a_broken_page_keeps_previous_data_and_exits_1(
    catalog_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    breakage: dict[str, object],
    needle: str,
) -> None:
    before = (catalog_dir / "azure.csv").read_bytes()
    upstream = _moved(_azure(catalog_dir), on_demand_hourly=Decimal("80.00"))
    with serve(AzureRetailFake(azure_items(upstream), page_size=2, **breakage)) as fake:  # type: ignore[arg-type]
        code = _refresh(fake, catalog_dir, monkeypatch)
    out = capsys.readouterr()
    assert code == 1
    assert f"error: azure/eastus: {needle}" in out.out
    assert (catalog_dir / "azure.csv").read_bytes() == before


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"retailPrice": 0.0}, "price 0.0 is not positive"),
        ({"retailPrice": 700.0}, "price 700.0 looks like a placeholder"),
        ({"currencyCode": "EUR"}, "currency 'EUR' is not USD"),
    ],
)
def test_hostile_prices_reject_the_region(
    catalog_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    change: dict[str, object],
    needle: str,
) -> None:
    before = (catalog_dir / "azure.csv").read_bytes()
    items = azure_items(_moved(_azure(catalog_dir), on_demand_hourly=Decimal("80.00")))
    target = next(i for i in items if i["armSkuName"].endswith("NV6ads_A10_v5"))
    target.update(change)
    with serve(AzureRetailFake(items)) as fake:
        code = _refresh(fake, catalog_dir, monkeypatch)
    out = capsys.readouterr().out
    assert code == 1
    assert needle in out and "region not updated" in out
    assert (catalog_dir / "azure.csv").read_bytes() == before


def test_one_failing_region_leaves_the_others_updated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    directory = write_catalog(tmp_path / "two", azure=[*SMALL_AZURE, *WESTUS])
    upstream = _moved(_azure(directory), on_demand_hourly=Decimal("80.00"))
    items = [i for i in azure_items(upstream) if i["armRegionName"] == "eastus"]
    items += [{**i, "currencyCode": "JPY"} for i in azure_items(upstream)
              if i["armRegionName"] == "westus3"]  # fmt: skip
    with serve(AzureRetailFake(items)) as fake:
        code = _refresh(fake, directory, monkeypatch)
    assert code == 1
    after = {o.key: o for o in _azure(directory)}
    assert after[("azure", "Standard_ND96isr_H100_v5", "eastus")].on_demand_hourly == 80
    west = after[("azure", "Standard_NC24ads_A100_v4", "westus3")]
    assert west.on_demand_hourly == Decimal("3.673") and west.source == "test"
    assert "westus3" in capsys.readouterr().out


def test_dry_run_writes_nothing(
    catalog_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (catalog_dir / "azure.csv").read_bytes()
    upstream = _moved(_azure(catalog_dir), on_demand_hourly=Decimal("80.00"))
    with serve(AzureRetailFake(azure_items(upstream))) as fake:
        assert _refresh(fake, catalog_dir, monkeypatch, "--dry-run") == 0
    assert "dry run, nothing written" in capsys.readouterr().out
    assert (catalog_dir / "azure.csv").read_bytes() == before


def test_vanishing_offers_are_refused_unless_forced(
    catalog_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (catalog_dir / "azure.csv").read_bytes()
    only_nd = [o for o in _azure(catalog_dir) if "ND96" in o.instance_type]
    with serve(AzureRetailFake(azure_items(only_nd))) as fake:
        assert _refresh(fake, catalog_dir, monkeypatch) == 1
        assert "1 of 2 offers (50%) would vanish" in capsys.readouterr().out
        assert (catalog_dir / "azure.csv").read_bytes() == before
        assert _refresh(fake, catalog_dir, monkeypatch, "--force") == 0
    assert [o.instance_type for o in _azure(catalog_dir)] == ["Standard_ND96isr_H100_v5"]


def test_user_overlay_wins_over_bundle_and_source_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = write_catalog(tmp_path / "base")
    user = tmp_path / "user"
    user.mkdir()
    (user / "azure.csv").write_bytes((base / "azure.csv").read_bytes())
    # Only azure.csv is in the user folder: the rest comes from the bundle.
    assert main(["catalog", "--source", "--json", "--catalog-dir", str(user)]) == 0
    records = json.loads(capsys.readouterr().out)
    origins = {r["provider"]: r["origin"] for r in records}
    assert origins["azure"] == str(user / "azure.csv")
    assert all(v == "bundled" for k, v in origins.items() if k != "azure")


def test_end_to_end_in_a_subprocess(catalog_dir: Path) -> None:
    import os
    import subprocess
    import sys

    upstream = _moved(_azure(catalog_dir), on_demand_hourly=Decimal("80.00"))
    env = {**os.environ, "GPUPLAN_CATALOG_DIR": str(catalog_dir)}

    def gpuplan(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gpuplan", *argv],
            capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip

    with serve(AzureRetailFake(azure_items(upstream))) as fake:
        env.update({**os.environ, ENDPOINT_ENV: fake.endpoint})  # with the fake's proxy
        done = gpuplan("catalog", "refresh", "--provider", "azure")
    assert done.returncode == 0, done.stderr
    assert "gpuplan: azure eastus: page 1" in done.stderr
    assert f"wrote {catalog_dir / 'azure.csv'}" in done.stdout
    listed = gpuplan("catalog", "--source", "--provider", "azure", "--json")
    records = {r["instance_type"]: r for r in json.loads(listed.stdout)}
    nd = records["Standard_ND96isr_H100_v5"]
    assert nd["on_demand_hourly"] == 80.0
    assert nd["origin"] == str(catalog_dir / "azure.csv")
    assert nd["source"] == "Azure Retail Prices API"


def test_an_unreachable_api_fails_fast_each_error_once_and_claims_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    directory = write_catalog(tmp_path / "two", azure=[*SMALL_AZURE, *WESTUS])
    with socket.socket() as closed:  # a loopback port nothing listens on: refused at once
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv(ENDPOINT_ENV, f"http://127.0.0.1:{port}/api/retail/prices")
    argv = ["catalog", "refresh", "--provider", "azure", "--catalog-dir", str(directory)]
    code = main([*argv, "--dry-run", "--no-discover"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "unchanged" not in out and "no price read (2 failed)" in out
    assert out.count("cannot reach the price API") == 1  # once, not once per region
    assert "cannot reach" not in err  # the progress line does not repeat it
    assert "azure/westus3: not tried: the price API did not answer for eastus" in out
