"""Lifetimes, exemptions and owner notices on the Azure ARM fake (the shared scenario,
tests/fakes/lifetime_scenarios.py). Azure's stop is a deallocate. ARM says nothing of
when a VM was deallocated, so the stopped VM carries gpuplan's own ``gpuplan-stopped-at``
(a VM gpuplan stopped 40 days ago); a VM without it is left alone. Its managed disks are
copied into snapshots, then the VM is deleted."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from gpuplan.core.lifecycle.idle import STOPPED_AT_TAG, format_tag_time
from gpuplan.ledger import Ledger
from gpuplan.providers.azure.provider import SNAPSHOT_OF_TAG
from gpuplan.usecases.lifecycle.owner_notices import OwnerNotifier
from gpuplan.usecases.lifecycle.stop_idle import StopIdleResult, run_stop_idle
from tests.fakes import lifetime_scenarios as sc
from tests.fakes.azure_world import SUB, AzureWorld
from tests.fakes.policy_fixtures import HookServer

SCOPE = {"azure": {"subscriptions": [SUB]}}
SIZE = "Standard_NC24ads_A100_v4"
DISKS = "Microsoft.Compute/disks"


def build(azure: AzureWorld) -> dict[str, str]:
    ids: dict[str, str] = {}
    for m in sc.FLEET:
        tags = dict(m.labels)
        disk = f"/subscriptions/{SUB}/resourceGroups/research-rg/providers/{DISKS}/{m.name}"
        props: dict[str, object] = {
            "tags": tags,
            "storageProfile": {"osDisk": {"managedDisk": {"id": disk}}, "dataDisks": []},
        }
        if m.running:
            props["timeCreated"] = (sc.NOW - m.ran).isoformat()
        else:
            props["power"] = "deallocated"
            props["timeCreated"] = (sc.NOW - timedelta(days=50)).isoformat()
            tags[STOPPED_AT_TAG] = format_tag_time(sc.NOW - timedelta(days=sc.STOPPED_DAYS))
        rid = azure.fake.add_vm(SUB, "research-rg", m.name, SIZE, **props)
        if m.running:
            for at in sc.periods():
                azure.fake.publish(rid, 0, at + timedelta(seconds=30), sc.percent(m))
        ids[m.name] = rid
    return ids


def outcomes(result: StopIdleResult) -> dict[str, str]:
    return {o.item.instance.name or "": o.outcome.value for o in result.outcomes}


def deallocated(expected: dict[str, str]) -> dict[str, str]:
    return {k: "deallocated" if v == "stopped" else v for k, v in expected.items()}


def test_lifetimes_exemptions_and_owners_on_azure(
    azure: AzureWorld, hook_server: HookServer, tmp_path: Path
) -> None:
    ids = build(azure)
    names = {v: k for k, v in ids.items()}
    provider = azure.provider()
    policy = sc.policy(SCOPE)
    owners = OwnerNotifier.of(policy, {sc.HOOK_ENV: hook_server.url})
    with Ledger(tmp_path / "l.db") as ledger:
        dry = run_stop_idle(policy, [provider], apply=False, now=sc.NOW, ledger=ledger)
        assert set(outcomes(dry).values()) == {"none"}
        first = run_stop_idle(
            policy, [provider], apply=True, now=sc.NOW, ledger=ledger, owners=owners
        )
        assert outcomes(first) == deallocated(sc.FIRST)
        told = {(names[n.instance_id], n.rule, n.state) for n in first.owner_notices}
        assert told == sc.TOLD_FIRST
        second = run_stop_idle(
            policy, [provider], apply=True, now=sc.LATER, ledger=ledger, owners=owners
        )
    assert outcomes(second) == deallocated(sc.second("terminated"))
    assert second.owner_notices == [] and len(hook_server.received) == 3
    assert azure.fake.power(ids["old-stopped"]) is None  # deleted
    assert azure.fake.power(ids["long-run"]) == "PowerState/deallocated"
    assert azure.fake.power(ids["fresh"]) == "PowerState/running"
    assert azure.fake.power(ids["keep-valid"]) == "PowerState/running"
    [snap] = azure.fake.snapshots.values()
    assert snap["tags"][SNAPSHOT_OF_TAG] == ids["old-stopped"]
    assert snap["properties"]["creationData"]["sourceResourceId"].endswith("/disks/old-stopped")
