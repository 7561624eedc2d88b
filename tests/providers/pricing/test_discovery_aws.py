"""AWS discovery: a refresh learns new GPU instance types from DescribeInstanceTypes.

EC2's listing is moto's server (AWS's own instance-type data: p6-b300.48xlarge with 8
B300, g5g with T4g, g7e with "RTX PRO Server 6000", fractional g6f ...), reached over
loopback by real boto3 clients; the Price List and spot history come from a loopback wire
fake (moto has no Price List). B300 is offered in us-west-2 only here (moto's offering
table is edited for the test, as a region's offering changes in life), while the Price
List prices it in both regions: it must be added in us-west-2 only.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto.ec2.models.instance_types import INSTANCE_TYPE_OFFERINGS
from moto.server import ThreadedMotoServer

from gpuplan.cli.catalog_refresh_cmd import report_record
from gpuplan.cli.main import main
from gpuplan.core.catalog.discovery import Discovery
from gpuplan.core.catalog.offers import Offer, Provider
from gpuplan.loaders.catalog import load_catalog
from gpuplan.providers.aws.price_list import fetch_aws_prices
from gpuplan.providers.aws.type_discovery import discover_aws_types
from gpuplan.providers.pricing import Progress
from gpuplan.usecases.catalog.refresh import FetchRequest, RefreshReport, refresh_catalog
from tests.conftest import SMALL_AWS, write_catalog
from tests.providers.pricing import aws_wire_fake
from tests.providers.pricing.aws_fixtures import price_list, spot_history

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
KEYS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
OREGON = "g5.xlarge,us-west-2,A10G,1,24,4,16,PCIe,10,1.006,0.41,usw2-az1,0.63,0.43,2026-12-01,test"
P3 = "p3.2xlarge,us-east-1,V100-16GB,1,16,8,61,single GPU,10,3.06,0.92,use1-az2,,,2026-12-01,test"
# Fixture prices for the fake's Price List (test data, not a claim about AWS's price).
B300_HOURLY = Decimal("142.4200")
B300_SPOT = Decimal("61.0500")


@pytest.fixture(scope="module")
def moto_ec2() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


def _b300(region: str, zone: str) -> Offer:
    return Offer(
        provider=Provider.AWS,
        instance_type="p6-b300.48xlarge",
        region=region,
        gpu="B300",
        gpu_count=8,
        gpu_memory_gb=269,
        vcpus=192,
        memory_gb=4096,
        on_demand_hourly=B300_HOURLY,
        spot_hourly=B300_SPOT,
        spot_zone=zone,
        as_of=NOW.date(),
        source="fixture",
    )


CALLS: set[str] = set()
"""IAM actions of the AWS calls the refresh made (recorded from botocore's events)."""


def _client(service: str, region: str, endpoint: str) -> Any:
    client = boto3.client(service, region_name=region, endpoint_url=endpoint, **KEYS)
    prefix = client.meta.service_model.signing_name
    client.meta.events.register(
        "before-call", lambda model, **_: CALLS.add(f"{prefix}:{model.name}")
    )
    return client


@pytest.fixture(scope="module")
def listing(moto_ec2: str) -> Discovery:
    """moto's EC2 listing of both regions, read once for the module (it is slow), with
    B300 offered in us-west-2 only (moto's offering table edited for it)."""
    with pytest.MonkeyPatch.context() as patch:
        east = INSTANCE_TYPE_OFFERINGS["region"]["us-east-1"]
        trimmed = [o for o in east if o["InstanceType"] != "p6-b300.48xlarge"]
        assert len(trimmed) == len(east) - 1  # moto's data does offer it there
        patch.setitem(INSTANCE_TYPE_OFFERINGS["region"], "us-east-1", trimmed)
        return discover_aws_types(
            ("us-east-1", "us-west-2"), ec2_client_for=lambda r: _client("ec2", r, moto_ec2)
        )


def _refresh(directory: Path, found: Discovery, *, dry_run: bool = False) -> RefreshReport:
    current = [o for o in load_catalog(directory).offers if o.provider is Provider.AWS]
    current = [o for o in current if o.instance_type != "p3.2xlarge"]  # gone from the API
    priced = [*current, _b300("us-west-2", "usw2-az3"), _b300("us-east-1", "use1-az1")]
    fake = aws_wire_fake.AwsWireFake(entries=price_list(priced), spot=spot_history(priced, NOW))
    with aws_wire_fake.serve(fake) as prices:

        def fetch(req: FetchRequest) -> Any:
            return fetch_aws_prices(
                req.regions,
                req.instance_types,
                now=req.now,
                pricing_client=_client("pricing", "us-east-1", prices),
                ec2_client_for=lambda r: _client("ec2", r, prices),
            )

        def listed(regions: tuple[str, ...], progress: Progress) -> Discovery:
            assert set(regions) == found.regions
            return found

        return refresh_catalog(
            now=NOW,
            providers=[Provider.AWS],
            catalog_dir=directory,
            dry_run=dry_run,
            fetchers={Provider.AWS: fetch},
            discoverers={Provider.AWS: listed},
        )


@pytest.fixture
def aws_dir(tmp_path: Path) -> Path:
    return write_catalog(tmp_path / "catalog", aws=[*SMALL_AWS, OREGON, P3])


def test_new_b300_type_is_added_where_listed_and_reaches_catalog_and_estimate(
    aws_dir: Path, listing: Discovery, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _refresh(aws_dir, listing)
    (aws,) = report.outcomes
    assert [o.key for o in aws.diff.added] == [("aws", "p6-b300.48xlarge", "us-west-2")]
    assert aws.new_types == ["p6-b300.48xlarge"]
    assert aws.vanished_types == ["p3.2xlarge"]
    b300 = next(o for o in load_catalog(aws_dir).offers if o.instance_type == "p6-b300.48xlarge")
    assert (b300.gpu, b300.gpu_count, b300.vcpus) == ("B300", 8, 192)
    assert b300.gpu_memory_gb == 269  # 275,040 MiB per GPU as DescribeInstanceTypes says
    assert b300.network_gbps == 6400
    assert (b300.on_demand_hourly, b300.spot_hourly) == (B300_HOURLY, B300_SPOT)
    assert b300.as_of == NOW.date()

    assert main(["catalog", "--gpu", "B300", "--json", "--catalog-dir", str(aws_dir)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["instance_type"], r["region"]) for r in rows] == [("p6-b300.48xlarge", "us-west-2")]
    argv = ["estimate", "--params", "70B", "--tokens", "1T", "--gpu", "B300", "--json"]
    assert main([*argv, "--catalog-dir", str(aws_dir)]) == 0
    options = json.loads(capsys.readouterr().out)["options"]
    assert options and {o["instance_type"] for o in options} == {"p6-b300.48xlarge"}


def test_unknown_gpus_are_reported_by_name_and_never_added(
    aws_dir: Path, listing: Discovery
) -> None:
    report = _refresh(aws_dir, listing)
    (aws,) = report.outcomes
    unknown = {u.name: u for u in aws.unknown_gpus}
    # GPUs AWS lists that the spec table does not have: Graviton's T4g, RTX PRO parts.
    assert "T4g" in unknown and "g5g.xlarge" in unknown["T4g"].instance_types
    assert "RTX PRO Server 6000" in unknown
    added = {o.instance_type for o in aws.diff.added}
    for u in unknown.values():
        assert not added & set(u.instance_types)
        assert any(f"unknown GPU {u.name!r}" in p.message for p in aws.problems)
    # Known GPUs on types the fake Price List does not price: reported, not added.
    unpriced = [p.message for p in aws.problems if "no price found" in p.message]
    assert any("p5en.48xlarge (8x H200)" in m for m in unpriced)
    assert any("g6f" in n and "fractional" in n for n in aws.notes)
    record = report_record(report)
    gpus = {u["gpu"] for u in record["providers"][0]["unknown_gpus"]}  # type: ignore[index]
    assert {"T4g", "RTX PRO Server 6000"} <= gpus


def test_b300_is_unknown_without_its_spec_row(aws_dir: Path, listing: Discovery) -> None:
    table = aws_dir / "gpus.toml"
    text = table.read_text(encoding="utf-8")
    start = text.index('[[gpu]]\nname = "B300"')
    end = text.index("[[gpu]]", start + 1)
    table.write_text(text[:start] + text[end:], encoding="utf-8")
    (aws,) = _refresh(aws_dir, listing).outcomes
    assert not aws.diff.added
    (b300,) = [u for u in aws.unknown_gpus if u.name == "B300"]
    assert b300.instance_types == ("p6-b300.48xlarge",) and b300.regions == ("us-west-2",)


def test_dry_run_shows_new_and_vanished_types_and_writes_nothing(
    aws_dir: Path, listing: Discovery, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (aws_dir / "aws.csv").read_bytes()
    report = _refresh(aws_dir, listing, dry_run=True)
    assert (aws_dir / "aws.csv").read_bytes() == before
    from gpuplan.cli.catalog_refresh_cmd import _print_report

    _print_report(report, as_json=False)
    out = capsys.readouterr().out
    assert "  new type: p6-b300.48xlarge (8x B300) in us-west-2" in out
    assert "  vanished type: p3.2xlarge" in out
    assert "dry run, nothing written" in out


def test_the_refresh_policy_grants_exactly_the_calls_made(
    aws_dir: Path, listing: Discovery
) -> None:
    _refresh(aws_dir, listing)  # the listing's calls were recorded by its fixture
    policy = Path(__file__).resolve().parents[3] / "deploy" / "aws-catalog-refresh-policy.json"
    (statement,) = json.loads(policy.read_text(encoding="utf-8"))["Statement"]
    assert set(statement["Action"]) == CALLS


def test_default_listings_follow_the_environment(
    moto_ec2: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpuplan.providers.pricing import no_progress
    from gpuplan.usecases.catalog.refresh_types import default_discoverers

    for name in ("GPUPLAN_GCP_PROJECT", "AZURE_SUBSCRIPTION_ID"):
        monkeypatch.delenv(name, raising=False)
    assert set(default_discoverers()) == {Provider.AWS}  # GCP and Azure need a scope
    monkeypatch.setenv("GPUPLAN_GCP_PROJECT", "research")
    monkeypatch.setenv("AZURE_SUBSCRIPTION_ID", "00000000-0000-0000-0000-0000000000c3")
    assert set(default_discoverers()) == {Provider.AWS, Provider.GCP, Provider.AZURE}
    # The AWS listing is plain boto3: the endpoint and keys come from the environment.
    monkeypatch.setenv("AWS_ENDPOINT_URL_EC2", moto_ec2)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    found = default_discoverers()[Provider.AWS](("eu-west-1",), no_progress)
    assert found.regions == {"eu-west-1"} and not found.failures
    listed = {f.instance_type for f in found.found}
    assert {"p4d.24xlarge", "g5.xlarge"} <= listed
    assert "p5.48xlarge" not in listed  # not offered in eu-west-1 (the reference agrees)
