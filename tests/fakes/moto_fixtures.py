"""AWS on moto for the lifecycle tests: fake credentials, a moto world, a small catalog.

Import the fixtures into a test folder's conftest. No test may reach beyond loopback.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from gpuplan.core.catalog.query import Catalog
from gpuplan.loaders.catalog import load_catalog
from tests.conftest import write_catalog
from tests.fakes.aws_world import World


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        "AWS_PROFILE",
        "AWS_ENDPOINT_URL",
        "AWS_CONFIG_FILE",
        "AWS_SHARED_CREDENTIALS_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")


@pytest.fixture
def world(aws_env: None) -> Iterator[World]:
    from moto import mock_aws

    with mock_aws():
        yield World(boto3.Session(region_name="us-east-1"))


LC_AWS_ROWS = [
    "g5.xlarge,us-east-1,A10G,1,24,4,16,PCIe,10,1.006,0.45,use1-az1,0.63,0.43,2026-12-01,test",
    "g5.xlarge,us-west-2,A10G,1,24,4,16,PCIe,10,1.006,0.45,usw2-az1,0.63,0.43,2026-12-01,test",
    "g5.48xlarge,us-east-1,A10G,8,24,192,768,PCIe,100,16.288,6.5,use1-az1,,,2026-12-01,test",
    "p5.48xlarge,us-east-1,H100,8,80,192,2048,NVLink,3200,55.04,30.10,use1-az4,38.00,26.00,"
    "2026-12-01,test",
]


@pytest.fixture
def lc_catalog_dir(tmp_path: Path) -> Path:
    return write_catalog(tmp_path / "pricing", aws=LC_AWS_ROWS, gcp=[], azure=[])


@pytest.fixture
def lc_catalog(lc_catalog_dir: Path) -> Catalog:
    return load_catalog(lc_catalog_dir)
