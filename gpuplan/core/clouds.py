"""The per-cloud facts that the lower layers need, by provider: one table, filled by the registry.

The registry entry (:class:`gpuplan.providers.cloud_entry.CloudEntry`) is the one place a
cloud is described. The loaders and the pure core must not import the use cases, so the
few facts they need (the catalog file name and the region naming) travel down as a
:class:`CloudFacts` value: the entry carries it, and registering the entry registers it
here. The built-in clouds' facts are the constants below (the big three, and the GPU
clouds gpuplan prices but does not manage: their ``unsupported`` map says so), from which
their entries are built; they are in the table from the start, so the loaders and core
work on them without the registry being imported.

Pure: no I/O. The table is process-wide and changes only through :func:`register`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from gpuplan.core.catalog.kinds import Provider
from gpuplan.core.catalog.region_naming import (
    AWS_NAMING,
    AZURE_NAMING,
    COREWEAVE_NAMING,
    CRUSOE_NAMING,
    GCP_NAMING,
    LAMBDA_NAMING,
    MARKETPLACE_NAMING,
    NEBIUS_NAMING,
    RegionNaming,
)

if TYPE_CHECKING:  # pydantic loads only where policies are read, never for `estimate`
    from pydantic import BaseModel


class Feature(StrEnum):
    """What gpuplan can do on a cloud besides pricing its offers (SkyPilot keeps the same
    ``{feature: reason}`` map of what a cloud does not support)."""

    FLEET = "fleet"
    """List the GPU instances of a scope (``gpuplan fleet``, the TUI's fleet view)."""
    STOP_IDLE = "stop-idle"
    """Act on idle instances (``gpuplan stop-idle``, the scheduled job)."""
    AUDIT = "audit"
    """Compare the bill and the ledger (``gpuplan audit``)."""


@dataclass(frozen=True)
class CloudFacts:
    """What the catalog loader, the catalog writer and region naming know of one cloud."""

    provider: Provider
    catalog_file: str
    """The catalog CSV's file name, in the bundle and in the user catalog folder."""
    regions: RegionNaming
    local_storage: str = "local instance storage"
    """What an acting action (stop, hibernate, suspend) erases on this cloud, as
    ``policy check`` names it when ``idle.allow_data_loss`` is not written."""
    scope_section: type[BaseModel] | None = None
    """The model of the policy's ``scope.<name>`` section, from the cloud's registry entry
    (built-in clouds too: the constants below hold none until their entries register;
    every policy reader imports the registry); None for a cloud with no section."""
    billing: str = ""
    """How the cloud bills an on-demand instance (granularity, minimum, commitment), as its
    pricing page or documentation states it; empty where no source said."""
    unsupported: Mapping[Feature, str] = field(default_factory=dict)
    """What gpuplan does not do on this cloud, and why (``{feature: reason}``); empty for a
    cloud it manages. A policy section naming such a cloud is refused with the reason."""
    title: str = ""
    """The cloud's name as people write it (``Azure``, ``Vast.ai``); empty: its value."""

    @property
    def shown(self) -> str:
        """The cloud's name in sentences: its title, else the provider's value."""
        return self.title or self.provider.value

    @property
    def catalog_only(self) -> bool:
        """Offers are priced and planned here, but no instance is listed or acted on."""
        return Feature.FLEET in self.unsupported


AWS = CloudFacts(
    Provider.AWS,
    "aws.csv",
    AWS_NAMING,
    "AWS instance store (NVMe on g4dn, g5, g6, p4d, p5 ...)",
    billing="per second, 60 s minimum (Linux; EC2 pricing page)",
    title="AWS",
)
GCP = CloudFacts(
    Provider.GCP,
    "gcp.csv",
    GCP_NAMING,
    "GCP local SSD",
    billing="per second, 1 min minimum (Compute Engine docs)",
    title="GCP",
)
AZURE = CloudFacts(
    Provider.AZURE,
    "azure.csv",
    AZURE_NAMING,
    "the Azure temporary disk (every N-series size)",
    title="Azure",
)


def _catalog_only(name: str) -> dict[Feature, str]:
    why = (
        f"{name} is a catalog-only cloud in gpuplan: its offers are priced and planned, "
        "but gpuplan has no adapter to list, watch or stop its instances"
    )
    return dict.fromkeys(Feature, why)


def _gpu_cloud(name: str, shown: str, naming: RegionNaming, billing: str) -> CloudFacts:
    """A catalog-only GPU cloud: its provider, ``<name>.csv``, naming and billing note."""
    provider = Provider.define(Provider.named(name))
    return CloudFacts(
        provider,
        f"{name}.csv",
        naming,
        billing=billing,
        unsupported=_catalog_only(shown),
        title=shown,
    )


LAMBDA = _gpu_cloud(
    "lambda", "Lambda", LAMBDA_NAMING, "per minute; no minimum, no commitment (lambda.ai)"
)
COREWEAVE = _gpu_cloud(
    "coreweave", "CoreWeave", COREWEAVE_NAMING, "per minute; no minimum charge (CoreWeave docs)"
)
NEBIUS = _gpu_cloud(
    "nebius",
    "Nebius",
    NEBIUS_NAMING,
    "per second; pay-as-you-go, commitments optional (Nebius docs)",
)
CRUSOE = _gpu_cloud(
    "crusoe", "Crusoe", CRUSOE_NAMING, "per GPU-hour list; granularity not stated in the page read"
)
RUNPOD = _gpu_cloud("runpod", "RunPod", MARKETPLACE_NAMING, "per second; no commitment (runpod.io)")
VAST = _gpu_cloud(
    "vast",
    "Vast.ai",
    MARKETPLACE_NAMING,
    "marketplace: host-set prices move daily; a median of verified offers",
)
GPU_CLOUDS = (LAMBDA, COREWEAVE, NEBIUS, CRUSOE, RUNPOD, VAST)
"""The GPU clouds gpuplan prices beside the big three (catalog-only: no lifecycle)."""

_TABLE: dict[Provider, CloudFacts] = {f.provider: f for f in (AWS, GCP, AZURE, *GPU_CLOUDS)}


def register(facts: CloudFacts) -> None:
    """Add (or replace) one cloud's facts; the registry calls this for every entry."""
    _TABLE[facts.provider] = facts


def unregister(provider: Provider) -> None:
    """Drop a cloud's facts (a cloud a test registered, once the test is done)."""
    _TABLE.pop(provider, None)


def facts_of(provider: Provider) -> CloudFacts:
    """The facts of a registered cloud; KeyError names the provider otherwise."""
    return _TABLE[provider]


def registered() -> tuple[Provider, ...]:
    """Every cloud with facts, built-in ones first, then in registration order."""
    return tuple(_TABLE)


def scope_section(name: str) -> tuple[Provider, type[BaseModel]] | None:
    """The registered cloud whose policy section is ``scope.<name>``, with its model;
    None for an unknown key or a cloud with no section."""
    for facts in _TABLE.values():
        if facts.provider.value == name and facts.scope_section is not None:
            return facts.provider, facts.scope_section
    return None


def catalog_only(name: str) -> CloudFacts | None:
    """The catalog-only cloud named ``name`` (a policy's ``scope.<name>``), None otherwise."""
    for facts in _TABLE.values():
        if facts.provider.value == name and facts.catalog_only:
            return facts
    return None
