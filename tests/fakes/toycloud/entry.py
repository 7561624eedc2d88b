"""Toycloud's one registry entry, built from its facts (:mod:`.facts`)."""

from __future__ import annotations

from gpuplan.core.lifecycle.actions import Call, Refusal, one
from gpuplan.core.lifecycle.instances import Action
from gpuplan.providers.cloud_entry import CloudEntry, Service
from tests.fakes.toycloud import adapter, listing, metrics, prices
from tests.fakes.toycloud.bill import ToyBill
from tests.fakes.toycloud.facts import FACTS
from tests.fakes.toycloud.scope import ToyScope

ENTRY = CloudEntry(
    FACTS.provider,
    adapter.scopes,
    steps={
        Action.STOP: one(Call.STOP, "in memory"),
        Action.HIBERNATE: Refusal("Toycloud keeps no memory"),
        Action.SUSPEND: Refusal("Toycloud keeps no memory"),
        Action.DEALLOCATE: Refusal("Toycloud bills nothing once stopped"),
        Action.TERMINATE: Refusal("not in this test"),
    },
    catalog_file=FACTS.catalog_file,
    permission_file="tests/fakes/toycloud/permissions.json",
    regions=FACTS.regions,
    prices=prices.fetch,
    price_source=prices.SOURCE,
    discoverer=listing.types,
    services={Service.LISTING: "instances", Service.METRICS: "telemetry"},
    nothing_found="no Toycloud region: nothing was surveyed",
    local_storage=FACTS.local_storage,
    scope_section=ToyScope,
    metrics=metrics.METRICS,
    bill_keys=ToyBill,
    described=FACTS,
)
