"""GCP and Azure discovery through their real SDKs against wire fakes on loopback.

GCP: google-cloud-compute's REST client lists ``aggregated/machineTypes`` and
``aggregated/acceleratorTypes`` from a fake built on tests/fakes' HTTP server; the
Cloud Billing fake (tests/providers/pricing/gcp_fake) prices what it finds. Azure:
azure-mgmt-compute lists resource SKUs from the ARM fake in tests/fakes over TLS
(azure-core sends bearer tokens over https only); the Retail Prices fake prices them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import trustme

from gpuplan.core.catalog.discovery import Discovery
from gpuplan.core.catalog.offers import Offer, PriceParts, PricingModel, Provider
from gpuplan.loaders.catalog import load_catalog
from gpuplan.providers.azure.retail_prices import ENDPOINT_ENV as RETAIL_ENV
from gpuplan.providers.azure.type_discovery import discover_azure_types, gpu_from_size
from gpuplan.providers.gcp.billing_catalog import fetch_gcp_prices
from gpuplan.providers.gcp.type_discovery import discover_gcp_types
from gpuplan.providers.pricing import Progress
from gpuplan.usecases.catalog.refresh import FetchRequest, refresh_catalog
from tests.conftest import SMALL_AZURE, SMALL_GCP, write_catalog
from tests.fakes.azure_arm import ACTIONS, AzureFake
from tests.fakes.fixtures import ca_file, test_ca  # noqa: F401
from tests.fakes.http import FakeApi, Reply, Request, serve
from tests.providers.pricing import azure_fake, gcp_fake

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
PROJECT = "research"
SUB = "00000000-0000-0000-0000-0000000000b2"


@dataclass
class MachineTypesFake(FakeApi):
    """Compute Engine's aggregated machine-type and accelerator-type listings."""

    machines: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """zone -> machine types."""
    accelerators: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        prefix = r"/compute/v1/projects/(?P<project>[^/]+)/aggregated/"
        self.route("GET", prefix + "machineTypes", "machineTypes.aggregatedList", self._types)
        self.route(
            "GET", prefix + "acceleratorTypes", "acceleratorTypes.aggregatedList", self._accels
        )

    def _types(self, request: Request, project: str) -> Reply:
        items = {f"zones/{z}": {"machineTypes": m} for z, m in self.machines.items()}
        return 200, {}, {"kind": "compute#machineTypeAggregatedList", "items": items}

    def _accels(self, request: Request, project: str) -> Reply:
        items = {f"zones/{z}": {"acceleratorTypes": a} for z, a in self.accelerators.items()}
        return 200, {}, {"kind": "compute#acceleratorTypeAggregatedList", "items": items}


def _machine(name: str, cpus: int, gib: int, accel: str = "", count: int = 0) -> dict[str, Any]:
    body: dict[str, Any] = {"name": name, "guestCpus": cpus, "memoryMb": gib * 1024}
    if accel:
        body["accelerators"] = [{"guestAcceleratorType": accel, "guestAcceleratorCount": count}]
    return body


A4 = Offer(
    provider=Provider.GCP,
    instance_type="a4-highgpu-8g",
    region="us-central1",
    gpu="B200",
    gpu_count=8,
    gpu_memory_gb=180,
    vcpus=224,
    memory_gb=3968,
    # Fixture SKU prices for the Billing fake (test data, not GCP's price).
    parts={PricingModel.ON_DEMAND: PriceParts(host=Decimal("10.5"), accelerators=Decimal("80"))},
    on_demand_hourly=Decimal("90.5"),
    as_of=NOW.date(),
    source="fixture",
)


def test_gcp_refresh_adds_a4_and_reports_an_unknown_accelerator(tmp_path: Path) -> None:
    directory = write_catalog(tmp_path / "catalog", gcp=SMALL_GCP)
    current = [o for o in load_catalog(directory).offers if o.provider is Provider.GCP]
    compute = MachineTypesFake(
        machines={
            "us-central1-a": [
                _machine("a2-highgpu-1g", 12, 85, "nvidia-tesla-a100", 1),
                _machine("a3-highgpu-8g", 208, 1872, "nvidia-h100-80gb", 8),
                _machine("n1-standard-8", 8, 30),
            ],
            "us-central1-b": [
                _machine("a4-highgpu-8g", 224, 3968, "nvidia-b200", 8),
                _machine("g4-standard-48", 48, 180, "nvidia-rtx-pro-6000", 1),
            ],
            "europe-west4-a": [_machine("a4x-highgpu-4g", 140, 884, "nvidia-gb200", 4)],
        },
        accelerators={
            "us-central1-b": [
                {"name": "nvidia-b200", "description": "NVIDIA B200 180GB"},
                {"name": "nvidia-rtx-pro-6000", "description": "NVIDIA RTX PRO 6000"},
            ]
        },
    )
    billing = gcp_fake.BillingFake(gcp_fake.billing_skus([*current, A4]), page_size=50)
    with serve(compute) as compute_url, gcp_fake.serve(billing):

        def listing(regions: tuple[str, ...], progress: Progress) -> Discovery:
            return discover_gcp_types(PROJECT, regions, endpoint=compute_url, progress=progress)

        def fetch(req: FetchRequest) -> Any:
            return fetch_gcp_prices(
                req.regions, req.shapes, known=req.known, endpoint=billing.endpoint
            )

        report = refresh_catalog(
            now=NOW,
            providers=[Provider.GCP],
            catalog_dir=directory,
            fetchers={Provider.GCP: fetch},
            discoverers={Provider.GCP: listing},
        )
    (gcp,) = report.outcomes
    assert [o.key for o in gcp.diff.added] == [("gcp", "a4-highgpu-8g", "us-central1")]
    a4 = next(o for o in load_catalog(directory).offers if o.instance_type == "a4-highgpu-8g")
    assert (a4.gpu, a4.gpu_count, a4.vcpus, a4.memory_gb, a4.gpu_memory_gb) == (
        "B200",
        8,
        224,
        3968,
        180,
    )
    # The fake's host SKUs are per-vCPU and per-GiB rates fitted to the host price.
    assert abs((a4.on_demand_hourly or 0) - Decimal("90.5")) < Decimal("0.00001")
    parts = (a4.parts or {})[PricingModel.ON_DEMAND]
    assert parts.accelerators == Decimal(80) and abs(parts.host - Decimal("10.5")) < Decimal("1e-5")
    (unknown,) = gcp.unknown_gpus
    assert (unknown.name, unknown.instance_types) == ("nvidia-rtx-pro-6000", ("g4-standard-48",))
    # Out of scope (europe-west4 is not a catalog region here): not even looked at.
    assert not any("a4x" in p.message for p in gcp.problems)
    assert "a2-ultragpu-1g in us-central1: in the catalog, not listed by the API" in gcp.notes
    assert compute.calls["machineTypes.aggregatedList"] == 1
    # The role file grants exactly what these calls need.
    needed = {PERMISSIONS[name] for name in compute.calls}
    assert needed == _role_permissions(ROLE)


ROLE = Path(__file__).resolve().parents[3] / "deploy" / "gcp-catalog-refresh-role.yaml"
PERMISSIONS = {
    "machineTypes.aggregatedList": "compute.machineTypes.list",
    "acceleratorTypes.aggregatedList": "compute.acceleratorTypes.list",
}


def _role_permissions(path: Path) -> set[str]:
    import yaml

    return set(yaml.safe_load(path.read_text(encoding="utf-8"))["includedPermissions"])


@pytest.mark.parametrize(
    ("size", "segments"),
    [
        ("Standard_ND96isr_H100_v5", ("H100",)),
        ("Standard_ND128isr_NDR_GB200_v6", ("NDR", "GB200")),
        ("Standard_ND96isr_MI300X_v5", ("MI300X",)),
        ("Standard_NC6s_v3", ()),
    ],
)
def test_gpu_model_segments_of_azure_size_names(size: str, segments: tuple[str, ...]) -> None:
    assert gpu_from_size(size) == segments


class StaticToken:
    def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        from azure.core.credentials import AccessToken

        return AccessToken("test-token", 4_102_444_800)


def _sku(name: str, gpus: int, vcpus: int, memory: int, **extra: Any) -> dict[str, Any]:
    caps = {"GPUs": gpus, "vCPUs": vcpus, "MemoryGB": memory}
    return {
        "resourceType": "virtualMachines",
        "name": name,
        "locations": ["eastus"],
        "capabilities": [{"name": k, "value": str(v)} for k, v in caps.items()],
        **extra,
    }


GB200_SIZE = "Standard_ND128isr_NDR_GB200_v6"


@pytest.fixture
def arm(
    test_ca: trustme.CA,  # noqa: F811
    ca_file: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[AzureFake, str]]:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca_file))
    fake = AzureFake(require_bearer=True)
    fake.skus = [
        _sku("Standard_ND96isr_H100_v5", 8, 96, 1900),
        _sku(GB200_SIZE, 4, 128, 900),
        _sku("Standard_ND96isr_MI300X_v5", 8, 96, 1850),
        _sku("Standard_NC6s_v3", 1, 6, 112),
        _sku("Standard_NC24ads_A100_v4", 1, 24, 220),
        _sku("Standard_D4s_v5", 0, 4, 16),
        _sku("Standard_ND96isr_H200_v5", 8, 96, 1850, restrictions=[{"type": "Location"}]),
    ]
    with serve(fake, test_ca) as url:
        yield fake, url


def test_azure_refresh_adds_gb200_and_reports_unnamed_and_ambiguous_gpus(
    tmp_path: Path, arm: tuple[AzureFake, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake, url = arm
    directory = write_catalog(tmp_path / "catalog", azure=SMALL_AZURE)
    current = [o for o in load_catalog(directory).offers if o.provider is Provider.AZURE]
    gb200 = replace(
        current[0],
        **{
            "instance_type": GB200_SIZE,
            "gpu": "GB200",
            "gpu_count": 4,
            "on_demand_hourly": Decimal("108.16"),  # fixture price for the retail fake
            "reserved_1y_hourly": None,
            "reserved_3y_hourly": None,
        },
    )
    retail = azure_fake.AzureRetailFake(azure_fake.azure_items([*current, gb200]))
    with azure_fake.serve(retail):
        monkeypatch.setenv(RETAIL_ENV, retail.endpoint)

        def listing(regions: tuple[str, ...], progress: Progress) -> Discovery:
            return discover_azure_types(
                SUB, regions, endpoint=url, credential=StaticToken(), progress=progress
            )

        report = refresh_catalog(
            now=NOW,
            providers=[Provider.AZURE],
            catalog_dir=directory,
            discoverers={Provider.AZURE: listing},
        )
    (azure,) = report.outcomes
    assert [o.key for o in azure.diff.added] == [("azure", GB200_SIZE, "eastus")]
    added = next(o for o in load_catalog(directory).offers if o.instance_type == GB200_SIZE)
    assert (added.gpu, added.gpu_count, added.vcpus, added.memory_gb) == ("GB200", 4, 128, 900)
    assert added.gpu_memory_gb == 186  # not in resource SKUs: the spec table's figure
    unknown = {u.name: u.instance_types for u in azure.unknown_gpus}
    assert unknown == {
        "(not named in Standard_NC6s_v3)": ("Standard_NC6s_v3",),
        "A100": ("Standard_NC24ads_A100_v4",),  # 40 or 80 GB: ambiguous, never guessed
    }
    unpriced = [p.message for p in azure.problems if "no price found" in p.message]
    assert unpriced == [
        "new type Standard_ND96isr_MI300X_v5 (8x MI300X) in eastus: no price found; not added"
    ]
    assert not any("H200" in p.message for p in azure.problems)  # restricted: not offered
    assert fake.calls["skus.list"] == 1 and fake.tokens
    role = json.loads((ROLE.parent / "azure-role-definition.json").read_text(encoding="utf-8"))
    assert ACTIONS["skus.list"] in role["Actions"]  # the one ARM call discovery makes
