"""Toycloud's one registry entry: the only thing a new cloud registers."""

from __future__ import annotations

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.actions import Call, Refusal, one
from gpuplan.core.lifecycle.instances import Action
from gpuplan.providers.cloud_entry import CloudEntry, Service
from tests.fakes.toycloud import adapter, listing, metrics, prices
from tests.fakes.toycloud.bill import ToyBill
from tests.fakes.toycloud.scope import ToyScope

ENTRY = CloudEntry(
    Provider.named("toy"),
    adapter.scopes,
    steps={
        Action.STOP: one(Call.STOP, "in memory"),
        Action.HIBERNATE: Refusal("Toycloud keeps no memory"),
        Action.SUSPEND: Refusal("Toycloud keeps no memory"),
        Action.DEALLOCATE: Refusal("Toycloud bills nothing once stopped"),
        Action.TERMINATE: Refusal("not in this test"),
    },
    catalog_file="toy.csv",
    permission_file="tests/fakes/toycloud/permissions.json",
    regions=listing.NAMING,
    prices=prices.fetch,
    price_source=prices.SOURCE,
    discoverer=listing.types,
    services={Service.LISTING: "instances", Service.METRICS: "telemetry"},
    nothing_found="no Toycloud region: nothing was surveyed",
    local_storage="Toycloud scratch disks",
    scope_section=ToyScope,
    metrics=metrics.METRICS,
    bill_keys=ToyBill,
)
