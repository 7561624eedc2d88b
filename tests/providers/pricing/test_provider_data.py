"""Hostile provider data at the wire (issue 28, item 6): implausible prices reject their
region, every paginated read stops at its page and time caps, and Azure's real next
links (``:443`` spelled out; the fake spells ``:80``) are followed."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest

from gpuplan.cli.main import main
from gpuplan.core.catalog.offers import Offer, Provider
from gpuplan.loaders.catalog import load_catalog
from gpuplan.providers.aws import price_list as aws_price_list
from gpuplan.providers.aws import type_discovery as aws_types
from gpuplan.providers.aws.price_list import fetch_aws_prices
from gpuplan.providers.azure import retail_prices as azure_retail
from gpuplan.providers.azure import type_discovery as azure_types
from gpuplan.providers.azure.retail_prices import ENDPOINT_ENV as AZURE_ENV
from gpuplan.providers.gcp import billing_catalog as gcp_billing
from gpuplan.providers.gcp.billing_catalog import ENDPOINT_ENV as GCP_ENV
from gpuplan.providers.pricing import paging
from gpuplan.providers.pricing.paging import Cap, PageCapError, capped
from tests.providers.pricing import aws_wire_fake, gcp_fake
from tests.providers.pricing.aws_fixtures import price_list
from tests.providers.pricing.azure_fake import AzureRetailFake, azure_items, serve

KEYS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


def _offers(directory: Path, provider: Provider) -> list[Offer]:
    return [o for o in load_catalog(directory).offers if o.provider is provider]


def _azure_refresh(fake: AzureRetailFake, directory: Path, mp: pytest.MonkeyPatch) -> int:
    mp.setenv(AZURE_ENV, fake.endpoint)
    return main(["catalog", "refresh", "--provider", "azure", "--catalog-dir", str(directory)])


@pytest.mark.parametrize("price", [1e-300, 1e-7, 0.001])
def test_a_tiny_price_rejects_its_region(
    catalog_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    price: float,
) -> None:  # fmt: skip
    before = (catalog_dir / "azure.csv").read_bytes()
    items = azure_items(_offers(catalog_dir, Provider.AZURE))
    target = next(i for i in items if i["armSkuName"] == "Standard_ND96isr_H100_v5")
    target["retailPrice"] = price
    with serve(AzureRetailFake(items)) as fake:
        code = _azure_refresh(fake, catalog_dir, monkeypatch)
    out = capsys.readouterr().out
    assert code == 1
    assert "price per GPU-hour" in out and "implausible" in out and "region not updated" in out
    assert (catalog_dir / "azure.csv").read_bytes() == before


def test_azure_next_links_with_the_default_port_are_followed(
    catalog_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    items = azure_items(_offers(catalog_dir, Provider.AZURE))
    with serve(AzureRetailFake(items, page_size=2)) as fake:
        code = _azure_refresh(fake, catalog_dir, monkeypatch)
    err = capsys.readouterr().err
    assert code == 0, err
    assert fake.endpoint == "http://prices.azure.test/api/retail/prices"  # no port
    assert fake.links and all(r.startswith("http://prices.azure.test:80/api/") for r in fake.links)
    assert len(fake.requests) == len(fake.links) + 1  # every link followed
    assert f"page {len(fake.requests)}," in err


def test_a_next_link_to_another_port_is_still_refused(
    catalog_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    items = azure_items(_offers(catalog_dir, Provider.AZURE))
    with serve(AzureRetailFake(items, page_size=2)) as fake:
        monkeypatch.setenv(AZURE_ENV, "http://prices.azure.test:8080/api/retail/prices")
        argv = ["catalog", "refresh", "--provider", "azure", "--catalog-dir", str(catalog_dir)]
        fake.endpoint = "http://prices.azure.test/api/retail/prices"  # links: default port
        code = main(argv)
    assert code == 1
    assert "not followed" in capsys.readouterr().out


def test_an_endless_azure_listing_stops_at_its_page_cap(
    catalog_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(paging.CAPS, azure_retail.RETAIL, Cap(6, 300.0))
    before = (catalog_dir / "azure.csv").read_bytes()
    items = azure_items(_offers(catalog_dir, Provider.AZURE))
    with serve(AzureRetailFake(items, page_size=2, endless=True)) as fake:
        code = _azure_refresh(fake, catalog_dir, monkeypatch)
    assert code == 1
    assert "retail prices: more than 6 pages; giving up" in capsys.readouterr().out
    assert len(fake.requests) == 6
    assert (catalog_dir / "azure.csv").read_bytes() == before


def test_an_endless_aws_price_list_stops_at_its_page_and_time_caps(
    catalog_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = [o for o in _offers(catalog_dir, Provider.AWS) if o.region == "us-east-1"]
    fake = aws_wire_fake.AwsWireFake(entries=price_list(old), endless=True)
    types = sorted({o.instance_type for o in old})
    with aws_wire_fake.serve(fake) as url:

        def fetch() -> Any:
            return fetch_aws_prices(
                ["us-east-1"], types, now=datetime.now(UTC),
                pricing_client=boto3.client("pricing", region_name="us-east-1",
                                            endpoint_url=url, **KEYS),
                ec2_client_for=lambda r: boto3.client("ec2", region_name=r, endpoint_url=url,
                                                      **KEYS),
            )  # fmt: skip

        monkeypatch.setitem(paging.CAPS, aws_price_list.PRICE_LIST, Cap(10, 300.0))
        by_pages = fetch()
        pages = len(fake.calls)
        monkeypatch.setitem(paging.CAPS, aws_price_list.PRICE_LIST, Cap(10**6, 0.5))
        by_time = fetch()
    assert "price list: more than 10 pages; giving up" in by_pages.failures["us-east-1"]
    assert pages == 11  # the SDK fetched the 11th page before the cap saw it
    assert "price list: still paging after 0.5s" in by_time.failures["us-east-1"]
    assert by_pages.regions == by_time.regions == set()


def test_an_endless_gcp_sku_list_stops_at_its_page_cap(
    catalog_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(paging.CAPS, gcp_billing.SKUS, Cap(5, 300.0))
    before = (catalog_dir / "gcp.csv").read_bytes()
    skus = gcp_fake.billing_skus(_offers(catalog_dir, Provider.GCP))
    with gcp_fake.serve(gcp_fake.BillingFake(skus, endless=True)) as fake:
        monkeypatch.setenv(GCP_ENV, fake.endpoint)
        code = main(["catalog", "refresh", "--provider", "gcp", "--catalog-dir", str(catalog_dir)])
    out = capsys.readouterr()
    assert code == 1
    assert "billing SKUs: more than 5 pages; giving up" in out.out + out.err
    assert len(fake.requests) == 6
    assert (catalog_dir / "gcp.csv").read_bytes() == before


def test_capped_counts_time_from_the_first_page() -> None:
    ticks = itertools.count()
    clock = lambda: 10.0 * next(ticks)  # noqa: E731 - ten seconds per look
    with pytest.raises(PageCapError, match=r"still paging after 300s \(30 pages\)"):
        list(capped(itertools.repeat({}), azure_types.SKUS, "azure eastus", clock))
    assert list(capped([1, 2, 3], azure_types.SKUS, "azure eastus")) == [1, 2, 3]


def test_a_discovered_type_with_implausible_gpus_never_reaches_the_catalog(
    catalog_dir: Path,
) -> None:
    from gpuplan.core.catalog.discovery import Discovery, FoundType
    from gpuplan.core.catalog.offers import PricingModel
    from gpuplan.core.catalog.refresh import FetchResult, Quote
    from gpuplan.usecases.catalog.refresh import FetchRequest, refresh_catalog

    region = "us-east-1"
    found = [
        FoundType("p9.huge", region, "H100", 1e20, 192, 2048, gpu_memory_gb=80),
        FoundType("p9.half", region, "H100", 0.5, 8, 64, gpu_memory_gb=80),
    ]

    def listed(regions: tuple[str, ...], progress: Any) -> Discovery:
        return Discovery(Provider.AWS, found=list(found), regions=set(regions))

    def fetch(req: FetchRequest) -> FetchResult:
        out = FetchResult(Provider.AWS, regions=set(req.regions))
        for name, shape in req.shapes.items():
            price = shape.on_demand_hourly or Decimal("2.5")
            for r in req.regions:
                out.quotes.append(Quote(name, r, PricingModel.ON_DEMAND, price))
        return out

    report = refresh_catalog(
        now=datetime.now(UTC), providers=[Provider.AWS], catalog_dir=catalog_dir,
        fetchers={Provider.AWS: fetch}, discoverers={Provider.AWS: listed},
    )  # fmt: skip
    (aws,) = report.outcomes
    types = {o.instance_type: o for o in _offers(catalog_dir, Provider.AWS)}
    assert "p9.huge" not in types
    assert types["p9.half"].gpu_count == 0.5  # a fractional GPU is kept
    [line] = [p.message for p in aws.problems if "p9.huge" in p.message]
    assert "GPU count 1.000E+20 is implausible" in line and "not added" in line


def test_an_aws_instance_type_listing_past_its_time_cap_fails_the_region(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """moto answers the listing in one page, so the time cap is the one to reach: at 0 s
    the read stops at its first page and the region is reported failed, not half-listed."""
    from moto.server import ThreadedMotoServer

    from gpuplan.providers.aws.type_discovery import discover_aws_types

    monkeypatch.setitem(paging.CAPS, aws_types.TYPES, Cap(100, 0.0))
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        url = f"http://{host}:{port}"
        found = discover_aws_types(
            ["us-east-1"],
            ec2_client_for=lambda r: boto3.client("ec2", region_name=r, endpoint_url=url, **KEYS),
        )
    finally:
        server.stop()
    assert found.regions == set() and found.found == []
    assert "instance types: still paging after 0s" in found.failures["us-east-1"]
