"""An Azure world on wire fakes: ARM and batch metrics over TLS on 127.0.0.1.

The fake's certificate comes from a test CA made here; ``REQUESTS_CA_BUNDLE`` trusts it,
so azure-core's bearer-token policy runs as in production (https only).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trustme
from azure.core.credentials import AccessToken

from gpuplan.core.catalog.query import Catalog
from gpuplan.providers.azure.provider import AzureAdapter
from tests.fakes.azure_arm import AzureFake
from tests.fakes.fixtures import ca_file, catalog, test_ca  # noqa: F401
from tests.fakes.http import serve
from tests.fakes.scenarios import Case, samples_of

SUB = "00000000-0000-0000-0000-0000000000a1"


class StaticToken:
    """A credential as azure-core sees one: anything with ``get_token``."""

    def __init__(self) -> None:
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        self.scopes.append(scopes)
        return AccessToken("test-token", 4_102_444_800)


@dataclass
class AzureWorld:
    fake: AzureFake
    url: str
    catalog: Catalog
    credential: StaticToken

    def provider(self, subscription: str = SUB, **kw: Any) -> AzureAdapter:
        options: dict[str, Any] = {
            "credential": self.credential,
            "arm_endpoint": self.url,
            "metrics_endpoint": self.url,
            "catalog": self.catalog,
            "polling_interval_s": 0,
            "retry_total": 3,
            "retry_backoff_s": 0.01,
        }
        options.update(kw)
        return AzureAdapter(subscription, **options)

    def build(self, case: Case) -> str:
        props: dict[str, Any] = {
            "tags": dict(case.labels),
            "timeCreated": case.started.isoformat(),
            "location": "westus3" if case.second_location else "eastus",
        }
        if not case.running:
            props["power"] = "deallocated"
        if case.spot:
            props.update(priority="Spot", evictionPolicy="Deallocate")
        if case.managed:
            props["virtualMachineScaleSet"] = {
                "id": f"/subscriptions/{SUB}/resourceGroups/rg/providers/Microsoft.Compute/"
                f"virtualMachineScaleSets/{case.name}"
            }
        size = "Standard_ND96isr_H100_v5" if case.gpus == 8 else "Standard_NC24ads_A100_v4"
        rid = self.fake.add_vm(SUB, "research-rg", case.name, size, **props)
        for gpu, at, value in samples_of(case):
            self.fake.publish(rid, gpu, at, value)
        return rid


@pytest.fixture
def azure(
    catalog: Catalog,  # noqa: F811
    test_ca: trustme.CA,  # noqa: F811
    ca_file: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[AzureWorld]:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca_file))
    fake = AzureFake()
    with serve(fake, test_ca) as url:
        yield AzureWorld(fake, url, catalog, StaticToken())
