"""Shared fixtures: a small synthetic catalog folder the catalog tests can corrupt at will."""

from __future__ import annotations

import ipaddress
import shutil
import socket
from pathlib import Path
from typing import Any

import pytest

# The catalog's row types are bound to the real datetime.date when their modules are
# first imported; a test under freezegun that imported them first would bind FakeDate and
# the validated reader's schema would fail (an artefact of import order, not of gpuplan).
from gpuplan.loaders import catalog_files  # noqa: F401
from gpuplan.loaders.paths import bundled_pricing_dir
from gpuplan.usecases.clouds import registry as cloud_registry  # noqa: F401  (every listed cloud's facts and entry, as the shells and every policy reader have them)

AWS_HEADER = (
    "instance_type,region,gpu,gpu_count,gpu_memory_gb,vcpus,memory_gb,interconnect,"
    "network_gbps,on_demand_hourly,spot_hourly,spot_zone,reserved_1y_hourly,"
    "reserved_3y_hourly,as_of,source"
)
GCP_HEADER = (
    "instance_type,region,gpu,gpu_count,gpu_memory_gb,vcpus,memory_gb,interconnect,"
    "network_gbps,host_on_demand_hourly,gpu_on_demand_hourly,host_spot_hourly,gpu_spot_hourly,"
    "host_reserved_1y_hourly,gpu_reserved_1y_hourly,host_reserved_3y_hourly,"
    "gpu_reserved_3y_hourly,spot_zone,as_of,source"
)

SMALL_AWS = [
    "p5.48xlarge,us-east-1,H100,8,80,192,2048,NVLink,3200,55.04,30.10,use1-az4,38.00,26.00,"
    "2026-12-01,test",
    "p4de.24xlarge,us-east-1,A100-80GB,8,80,96,1152,NVLink,400,27.45,14.50,use1-az2,,,"
    "2026-12-01,test",
    "g5.xlarge,us-east-1,A10G,1,24,4,16,PCIe,10,1.006,0.45,use1-az1,0.63,0.43,2026-12-01,test",
]
SMALL_GCP = [
    "a2-highgpu-1g,us-central1,A100-40GB,1,40,12,85,NVLink,24,0.739,2.934,0.29,1.17,,,,,"
    "us-central1-a,2026-12-01,test",
    "a2-ultragpu-1g,us-central1,A100-80GB,1,80,12,170,NVLink,24,0.8,4.2,0.33,1.6,,,,,"
    "us-central1-a,2026-12-01,test",
    "a3-highgpu-8g,us-central1,H100,8,80,208,1872,NVLink,1000,9.46,33.61,3.8,18.0,,,,,"
    "us-central1-a,2026-12-01,test",
]
SMALL_AZURE = [
    "Standard_ND96isr_H100_v5,eastus,H100,8,80,96,1900,NVLink,3200,98.32,,,62.0,43.0,"
    "2026-12-01,test",
    "Standard_NV6ads_A10_v5,eastus,A10,0.1667,4,6,55,PCIe,,0.454,0.09,,,,2026-12-01,test",
]


def write_catalog(
    root: Path,
    aws: list[str] | None = None,
    gcp: list[str] | None = None,
    azure: list[str] | None = None,
    gpu_clouds: dict[str, list[str]] | None = None,
) -> Path:
    """A catalog folder with the real GPU table and the given provider rows; the GPU
    clouds' files (``lambda.csv`` ...) hold only the rows ``gpu_clouds`` gives by file
    name (none by default: a small catalog is the big three's few rows)."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copy(bundled_pricing_dir() / "gpus.toml", root / "gpus.toml")
    for name, header, rows in (
        ("aws.csv", AWS_HEADER, SMALL_AWS if aws is None else aws),
        ("gcp.csv", GCP_HEADER, SMALL_GCP if gcp is None else gcp),
        ("azure.csv", AWS_HEADER, SMALL_AZURE if azure is None else azure),
    ):
        (root / name).write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    from gpuplan.core.clouds import facts_of, registered

    for facts in (facts_of(p) for p in registered() if facts_of(p).catalog_only):
        rows = (gpu_clouds or {}).get(facts.catalog_file, [])
        text = "\n".join([GPU_CLOUD_HEADER, *rows]) + "\n"
        (root / facts.catalog_file).write_text(text, encoding="utf-8")
    return root


GPU_CLOUD_HEADER = (
    "instance_type,region,gpu,gpu_count,gpu_memory_gb,vcpus,memory_gb,interconnect,"
    "network_gbps,on_demand_hourly,spot_hourly,as_of,source"
)


def _share_botocore_models() -> None:
    """Every botocore loader of this process shares one cache of the SDK's data files.

    botocore caches a parsed service model per loader, that is per ``boto3.Session``, and
    the moto tests make a session per account, per world and per test: each re-parsed the
    multi-megabyte EC2 model (half the CPU of a moto test). The files are static, so one
    parse per process (per search path) gives the same models.
    """
    from botocore.loaders import Loader

    caches: dict[tuple[str, ...], dict[Any, Any]] = {}
    original = Loader.__init__

    def init(self: Loader, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self._cache = caches.setdefault(tuple(self.search_paths), {})

    Loader.__init__ = init  # type: ignore[method-assign]


_share_botocore_models()

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: Any) -> Any:
    """``socket.connect`` that refuses anything but this machine (unix sockets pass)."""
    if self.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0]
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if not loopback:
            raise OSError(f"test tried to reach {address!r}: only loopback is allowed")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _loopback_network_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reaches a real cloud: a fake that is not wired in fails loudly instead."""
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)


@pytest.fixture(autouse=True)
def _private_user_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A developer's refreshed catalog or ledger must never leak into a test."""
    home = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.delenv("GPUPLAN_CATALOG_DIR", raising=False)
    monkeypatch.delenv("GPUPLAN_DB", raising=False)


@pytest.fixture(autouse=True)
def _no_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test starts as a pipe: every column (pytest-xdist's workers inherit
    ``COLUMNS=80``); a test of the width rule sets ``COLUMNS`` itself."""
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.fixture
def small_catalog(tmp_path: Path) -> Path:
    return write_catalog(tmp_path / "pricing")
