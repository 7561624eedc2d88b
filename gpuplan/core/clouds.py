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

from gpuplan.core.kinds import Provider
from gpuplan.core.region_naming import AWS_NAMING, AZURE_NAMING, GCP_NAMING, RegionNaming


@dataclass(frozen=True)
class CloudFacts:
    """What the catalog loader, the catalog writer and region naming know of one cloud."""

    provider: Provider
    catalog_file: str
    """The catalog CSV's file name, in the bundle and in the user catalog folder."""
    regions: RegionNaming


AWS = CloudFacts(Provider.AWS, "aws.csv", AWS_NAMING)
GCP = CloudFacts(Provider.GCP, "gcp.csv", GCP_NAMING)
AZURE = CloudFacts(Provider.AZURE, "azure.csv", AZURE_NAMING)

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
