"""Toycloud's adapter: its instances in memory, one adapter per region."""

from __future__ import annotations

from datetime import UTC, datetime

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.instances import Capability, GpuInstance, InstanceState
from gpuplan.providers.base import CloudAdapter
from gpuplan.providers.cloud_entry import BuildContext
from gpuplan.providers.fake import FakeAdapter
from tests.fakes.toycloud.listing import REGIONS
from tests.fakes.toycloud.scope import ToyScope

STARTED = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
UTILISATION = {"idle": 1.0, "busy": 90.0}
"""Each instance's flat GPU utilisation, percent."""


def instances(region: str) -> list[GpuInstance]:
    """One idle and one busy 8-GPU instance in ``region``."""
    return [
        GpuInstance(
            provider=Provider("toy"),
            account="toy-team",
            region=region,
            instance_id=f"{region}-{name}",
            name=f"{region}-{name}",
            instance_type="toy.h100x8",
            state=InstanceState.RUNNING,
            started_at=STARTED,
            labels={"team": "research"},
            gpu="H100",
            gpu_count=8,
        )
        for name in UTILISATION
    ]


def scopes(context: BuildContext) -> dict[str, CloudAdapter]:
    """One in-memory adapter per region of the policy's ``scope.toy`` (every Toycloud
    region when the policy has no such section: a test builds them directly)."""
    section = context.policy.scope.section(Provider("toy"))
    regions = section.regions if isinstance(section, ToyScope) else REGIONS
    out: dict[str, CloudAdapter] = {}
    for region in regions:
        adapter = FakeAdapter(
            Provider("toy"),
            instances(region),
            capabilities=(Capability.LIST, Capability.METRICS, Capability.STOP, Capability.TAG),
            scope=f"toy {region}",
        )
        adapter.flat_percent = {f"{region}-{n}": p for n, p in UTILISATION.items()}
        out[region] = adapter
    return out
