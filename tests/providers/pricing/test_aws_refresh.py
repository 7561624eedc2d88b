"""AWS refresh through real boto3 clients with botocore's Stubber at the wire.

moto implements neither the Price List API nor a useful spot history, so the responses
are stubbed; the Stubber also checks the exact request parameters we send.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from gpuplan.core.catalog.offers import Offer, Provider
from gpuplan.loaders.catalog import load_catalog
from gpuplan.providers.aws.price_list import fetch_aws_prices
from gpuplan.usecases.catalog.refresh import FetchRequest, RefreshReport, refresh_catalog
from tests.conftest import SMALL_AWS, write_catalog
from tests.providers.pricing.aws_fixtures import price_list, spot_history

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
OREGON = "g5.xlarge,us-west-2,A10G,1,24,4,16,PCIe,10,1.006,0.41,usw2-az1,0.63,0.43,2026-12-01,test"
KEYS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


def _filters(region: str, types: list[str]) -> list[dict[str, str]]:
    return [
        {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region},
        {"Type": "TERM_MATCH", "Field": "operatingSystem", "Value": "Linux"},
        {"Type": "TERM_MATCH", "Field": "tenancy", "Value": "Shared"},
        {"Type": "TERM_MATCH", "Field": "capacitystatus", "Value": "Used"},
        {"Type": "TERM_MATCH", "Field": "preInstalledSw", "Value": "NA"},
        {"Type": "ANY_OF", "Field": "instanceType", "Value": ",".join(types)},
    ]


class FakeAws:
    """Stubbed pricing and per-region EC2 clients, queued with responses per region."""

    def __init__(self) -> None:
        self.pricing = boto3.client("pricing", region_name="us-east-1", **KEYS)
        self.pricing_stub = Stubber(self.pricing)
        self.ec2: dict[str, Any] = {}
        self.ec2_stubs: dict[str, Stubber] = {}

    def ec2_for(self, region: str) -> Any:
        if region not in self.ec2:
            self.ec2[region] = boto3.client("ec2", region_name=region, **KEYS)
            self.ec2_stubs[region] = Stubber(self.ec2[region])
        return self.ec2[region]

    def price_pages(
        self, region: str, types: list[str], pages: list[list[str]], fail_at: int | None = None
    ) -> None:
        """Queue get_products pages; page ``fail_at`` (0-based) answers 503 instead."""
        for n, page in enumerate(pages):
            if n == fail_at:
                self.pricing_stub.add_client_error(
                    "get_products",
                    service_error_code="ServiceUnavailableException",
                    http_status_code=503,
                )
                return
            response: dict[str, Any] = {"FormatVersion": "aws_v1", "PriceList": page}
            if n < len(pages) - 1:
                response["NextToken"] = f"token-{n + 1}"
            expected: dict[str, Any] = {
                "ServiceCode": "AmazonEC2",
                "Filters": _filters(region, types),
                "FormatVersion": "aws_v1",
                "MaxResults": 100,
            }
            if n:
                expected["NextToken"] = f"token-{n}"
            self.pricing_stub.add_response("get_products", response, expected)

    def spot_pages(self, region: str, types: list[str], pages: list[list[dict[str, Any]]]) -> None:
        stub = self.ec2_stubs[region] if region in self.ec2 else None
        if stub is None:
            self.ec2_for(region)
            stub = self.ec2_stubs[region]
        for n, page in enumerate(pages):
            response: dict[str, Any] = {"SpotPriceHistory": page}
            if n < len(pages) - 1:
                response["NextToken"] = f"spot-{n + 1}"
            expected: dict[str, Any] = {
                "InstanceTypes": types,
                "ProductDescriptions": ["Linux/UNIX"],
                "StartTime": NOW,
            }
            if n:
                expected["NextToken"] = f"spot-{n}"
            stub.add_response("describe_spot_price_history", response, expected)

    def fetcher(self, request: FetchRequest) -> Any:
        return fetch_aws_prices(
            request.regions,
            request.instance_types,
            now=request.now,
            pricing_client=self.pricing,
            ec2_client_for=self.ec2_for,
        )

    def __enter__(self) -> FakeAws:
        self.pricing_stub.activate()
        for stub in self.ec2_stubs.values():
            stub.activate()
        return self

    def __exit__(self, *exc: object) -> None:
        self.pricing_stub.deactivate()
        for stub in self.ec2_stubs.values():
            stub.deactivate()


@pytest.fixture
def aws_catalog(tmp_path: Path) -> Path:
    return write_catalog(tmp_path / "catalog", aws=[*SMALL_AWS, OREGON])


def _offers(directory: Path, region: str | None = None) -> list[Offer]:
    return [
        o
        for o in load_catalog(directory).offers
        if o.provider is Provider.AWS and (region is None or o.region == region)
    ]


def _refresh(fake: FakeAws, directory: Path, **kwargs: Any) -> RefreshReport:
    with fake:
        report = refresh_catalog(
            now=NOW,
            providers=[Provider.AWS],
            catalog_dir=directory,
            fetchers={Provider.AWS: fake.fetcher},
            **kwargs,
        )
    fake.pricing_stub.assert_no_pending_responses()
    return report


def _queue_region(fake: FakeAws, offers: list[Offer], region: str, split: int = 2) -> None:
    types = sorted({o.instance_type for o in offers})
    mine = [o for o in offers if o.region == region]
    entries = price_list(mine)
    pages = [entries[i : i + split] for i in range(0, len(entries), split)]
    fake.price_pages(region, types, pages)
    records = spot_history(mine, NOW)
    fake.ec2_for(region)
    fake.spot_pages(region, types, [records[:3], records[3:]])


def test_refresh_reproduces_the_catalog_from_price_list_and_spot_history(
    aws_catalog: Path,
) -> None:
    old = _offers(aws_catalog)
    fake = FakeAws()
    for region in ("us-east-1", "us-west-2"):
        _queue_region(fake, old, region)
    report = _refresh(fake, aws_catalog)
    assert report.ok, report.outcomes[0].problems
    (aws,) = report.outcomes
    assert aws.diff.empty and aws.diff.unchanged == len(old)
    again = {o.key: o for o in _offers(aws_catalog)}
    for offer in old:
        new = again[offer.key]
        assert (new.on_demand_hourly, new.spot_hourly, new.spot_zone) == (
            offer.on_demand_hourly, offer.spot_hourly, offer.spot_zone,
        )  # fmt: skip
        assert (new.reserved_1y_hourly, new.reserved_3y_hourly) == (
            offer.reserved_1y_hourly, offer.reserved_3y_hourly,
        )  # fmt: skip
        assert new.source.startswith("AWS Price List API") and new.as_of == NOW.date()
    p5 = next(n for n in aws.notes if n.startswith("p5.48xlarge us-east-1"))
    assert "lowest 30.1 in use1-az4, median 36.12 over 3 zones" in p5


def test_price_cut_shows_as_largest_move(aws_catalog: Path) -> None:
    old = _offers(aws_catalog)
    cut = [
        replace(o, **{"on_demand_hourly": Decimal("30.27")})
        if o.instance_type == "p5.48xlarge"
        else o
        for o in old
    ]
    fake = FakeAws()
    for region in ("us-east-1", "us-west-2"):
        _queue_region(fake, cut, region)
    report = _refresh(fake, aws_catalog)
    (move,) = report.outcomes[0].diff.largest_moves(1)
    assert move.key == ("aws", "p5.48xlarge", "us-east-1")
    assert (move.old, move.new) == (Decimal("55.04"), Decimal("30.27"))
    assert _offers(aws_catalog, "us-east-1")[-1].instance_type == "p5.48xlarge"


def test_a_failing_region_keeps_its_data_and_the_other_updates(aws_catalog: Path) -> None:
    old = _offers(aws_catalog)
    dearer = [replace(o, **{"on_demand_hourly": Decimal("1.2")}) for o in old]
    fake = FakeAws()
    _queue_region(fake, dearer, "us-east-1")
    fake.pricing_stub.add_client_error(
        "get_products", service_error_code="AccessDeniedException", http_status_code=403
    )
    report = _refresh(fake, aws_catalog)
    (aws,) = report.outcomes
    assert not report.ok
    assert "AccessDeniedException" in aws.failures["us-west-2"]
    assert aws.regions == ["us-east-1"]
    assert {o.on_demand_hourly for o in _offers(aws_catalog, "us-east-1")} == {Decimal("1.2")}
    assert {o.on_demand_hourly for o in _offers(aws_catalog, "us-west-2")} == {Decimal("1.006")}


@pytest.mark.parametrize(
    ("mangle", "needle"),
    [
        (lambda e: e[: len(e) // 2], "unreadable Price List entry"),
        (lambda e: e.replace('"USD": "55.0400000000"', '"USD": "0.0000000000"'), "not positive"),
        (lambda e: e.replace('"USD": "55.0400000000"', '"USD": "700.0000000000"'), "placeholder"),
        (lambda e: e.replace('{"USD": "55.0400000000"}', '{"CNY": "380.00"}'), "'CNY' is not USD"),
    ],
)
def test_hostile_price_list_keeps_previous_data(
    aws_catalog: Path, mangle: Any, needle: str
) -> None:
    before = (aws_catalog / "aws.csv").read_bytes()
    old = _offers(aws_catalog, "us-east-1")
    types = sorted({o.instance_type for o in _offers(aws_catalog)})
    fake = FakeAws()
    entries = price_list(old)
    p5 = next(i for i, e in enumerate(entries) if '"55.0400000000"' in e)
    entries[p5] = mangle(entries[p5])
    fake.price_pages("us-east-1", types, [entries])
    fake.ec2_for("us-east-1")
    fake.spot_pages("us-east-1", types, [spot_history(old, NOW)])
    report = _refresh(fake, aws_catalog, regions=["us-east-1"])
    (aws,) = report.outcomes
    assert not report.ok
    messages = [*aws.failures.values(), *(p.message for p in aws.problems)]
    assert any(needle in m for m in messages), messages
    assert (aws_catalog / "aws.csv").read_bytes() == before


def test_a_price_list_page_failing_mid_way_keeps_the_region(aws_catalog: Path) -> None:
    before = (aws_catalog / "aws.csv").read_bytes()
    old = _offers(aws_catalog, "us-east-1")
    types = sorted({o.instance_type for o in _offers(aws_catalog)})
    fake = FakeAws()
    entries = price_list(old)
    fake.price_pages("us-east-1", types, [entries[:2], entries[2:]], fail_at=1)
    report = _refresh(fake, aws_catalog, regions=["us-east-1"])
    (aws,) = report.outcomes
    assert not report.ok and aws.regions == []
    assert "ServiceUnavailableException" in aws.failures["us-east-1"]
    assert (aws_catalog / "aws.csv").read_bytes() == before
