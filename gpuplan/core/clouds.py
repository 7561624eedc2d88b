"""The per-cloud facts that the lower layers need, by provider: one table, filled by the registry.

The registry entry (:class:`gpuplan.usecases.cloud_entry.CloudEntry`) is the one place a
cloud is described. The loaders and the pure core must not import the use cases, so the
few facts they need (the catalog file name and the region naming) travel down as a
:class:`CloudFacts` value: the entry carries it, and registering the entry registers it
here. The three built-in clouds' facts are the constants below, from which their entries
are built; they are in the table from the start, so the loaders and core work on them
without the registry being imported.

Pure: no I/O. The table is process-wide and changes only through :func:`register`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplan.core.kinds import Provider
from gpuplan.core.region_naming import AWS_NAMING, AZURE_NAMING, GCP_NAMING, RegionNaming

if TYPE_CHECKING:  # pydantic loads only where policies are read, never for `estimate`
    from pydantic import BaseModel


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
    """The policy's ``scope.<name>`` section of a cloud a registry entry adds (checked
    by this model); None for the built-in clouds, whose sections are fields of
    :class:`gpuplan.core.policy.models.Scope`."""


AWS = CloudFacts(
    Provider.AWS, "aws.csv", AWS_NAMING, "AWS instance store (NVMe on g4dn, g5, g6, p4d, p5 ...)"
)
GCP = CloudFacts(Provider.GCP, "gcp.csv", GCP_NAMING, "GCP local SSD")
AZURE = CloudFacts(
    Provider.AZURE, "azure.csv", AZURE_NAMING, "the Azure temporary disk (every N-series size)"
)

_TABLE: dict[Provider, CloudFacts] = {f.provider: f for f in (AWS, GCP, AZURE)}


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
    None for a built-in cloud (a field of the scope) or an unknown key."""
    for facts in _TABLE.values():
        if facts.provider.value == name and facts.scope_section is not None:
            return facts.provider, facts.scope_section
    return None
