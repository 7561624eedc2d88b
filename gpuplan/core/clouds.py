"""The per-cloud facts that the lower layers need, by provider: one table, filled from above.

The registry entry (:class:`gpuplan.providers.cloud_entry.CloudEntry`) is the one place a
cloud is described. The loaders and the pure core must not import the use cases or the
providers, so the few facts they need (the catalog file name, the region naming, the
wording of its local disks) travel down as a :class:`CloudFacts` value. Each cloud's
package states its facts in a light module (``gpuplan/providers/<cloud>/facts.py``: no
SDK, no pydantic); the shells register every listed cloud's facts before reading the
catalog (:func:`gpuplan.usecases.clouds.entries.register_facts`, a few small imports, so
``catalog`` and ``estimate`` never load the registry), and registering an entry registers
its facts again with what only the entry knows (its policy section's model).

Pure: no I/O, and no cloud named here. The table is process-wide and changes only
through :func:`register`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from gpuplan.core.catalog.kinds import (
    RESERVATION_RULES,
    PricingModel,
    Provider,
    ReservationRules,
)
from gpuplan.core.catalog.region_naming import RegionNaming

if TYPE_CHECKING:  # pydantic loads only where policies are read, never for `estimate`
    from pydantic import BaseModel

    from gpuplan.core.catalog.skypilot_rows import RowRules


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
    secret_env: tuple[str, ...] = ()
    """Environment variables whose values are this cloud's secrets: the CLI scrubs them
    from everything it prints."""
    price_key_env: str = ""
    """The environment variable holding the user's key for its price API (``catalog
    refresh``), where the API needs one."""
    credentials: str = ""
    """What ``catalog refresh`` needs from this cloud, as its help says it (a clause)."""
    endpoint_env: tuple[str, ...] = ()
    """Environment variables that point its price and listing APIs elsewhere."""
    skypilot: bool = False
    """SkyPilot publishes a ``vms.csv`` for it (``catalog import --format skypilot``)."""
    skypilot_rows: RowRules | None = None
    """How its vms.csv rows become one row per offer (host and accelerator rows joined);
    None: each row is one as it is."""
    outside_region: Callable[[str, str], bool] | None = None
    """``(zone, region) ->`` the zone is listed under the region but is not the region
    (a Local Zone: its own, far lower spot prices are left out of the region's)."""
    reservations: Mapping[PricingModel, ReservationRules] = field(default_factory=dict)
    """How the block-sold models this cloud sells are bought (Capacity Blocks ...):
    registering the facts states them for :attr:`PricingModel.rules`."""
    spot_evidence: str = ""
    """What the cloud publishes about how often its spot capacity is reclaimed, as the
    planner's spot assumption cites it; empty where it publishes nothing."""
    spot_node_labels: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Node labels (and their values) by which its managed Kubernetes marks a spot or
    preemptible node (EKS ``eks.amazonaws.com/capacityType: SPOT``)."""

    @property
    def shown(self) -> str:
        """The cloud's name in sentences: its title, else the provider's value."""
        return self.title or self.provider.value

    @property
    def catalog_only(self) -> bool:
        """Offers are priced and planned here, but no instance is listed or acted on."""
        return Feature.FLEET in self.unsupported


def catalog_only_features(name: str) -> dict[Feature, str]:
    """Every lifecycle feature refused, with the reason a catalog-only cloud gives."""
    why = (
        f"{name} is a catalog-only cloud in gpuplan: its offers are priced and planned, "
        "but gpuplan has no adapter to list, watch or stop its instances"
    )
    return dict.fromkeys(Feature, why)


def gpu_cloud(
    name: str,
    shown: str,
    naming: RegionNaming,
    billing: str,
    *,
    price_key_env: str = "",
    secret_env: tuple[str, ...] = (),
) -> CloudFacts:
    """A catalog-only GPU cloud's facts: its provider (not defined until registered),
    ``<name>.csv``, region naming, billing note, the key its price API needs and any other
    secret it reads (an optional key)."""
    return CloudFacts(
        Provider.named(name),
        f"{name}.csv",
        naming,
        billing=billing,
        unsupported=catalog_only_features(shown),
        title=shown,
        price_key_env=price_key_env,
        secret_env=secret_env,
    )


_TABLE: dict[Provider, CloudFacts] = {}


def register(facts: CloudFacts) -> None:
    """Add (or replace) one cloud's facts, its provider defined; the shells call this for
    every listed cloud's facts module before reading the catalog
    (:func:`gpuplan.usecases.clouds.entries.register_facts`), the registry for every entry."""
    Provider.define(facts.provider)
    RESERVATION_RULES.update(facts.reservations)
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
