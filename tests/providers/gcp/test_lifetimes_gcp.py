"""Lifetimes, exemptions and owner notices on the GCP wire fakes (the shared scenario,
tests/fakes/lifetime_scenarios.py): the stop time is the instance's own
``lastStopTimestamp``; its persistent disk is snapshotted (``disks.createSnapshot``,
labelled with the step's label), then the instance is deleted."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from gpuplan.ledger import Ledger
from gpuplan.providers.gcp.provider import SNAPSHOT_OF_LABEL
from gpuplan.usecases.lifecycle.owner_notices import OwnerNotifier
from gpuplan.usecases.lifecycle.stop_idle import StopIdleResult, run_stop_idle
from tests.fakes import lifetime_scenarios as sc
from tests.fakes.gcp_world import PROJECT, GcpWorld
from tests.fakes.policy_fixtures import HookServer

SCOPE = {"gcp": {"projects": [PROJECT]}}


def build(gcp: GcpWorld) -> dict[str, str]:
    ids: dict[str, str] = {}
    for m in sc.FLEET:
        extra: dict[str, object] = {"labels": dict(m.labels)}
        if m.running:
            extra["lastStartTimestamp"] = (sc.NOW - m.ran).isoformat()
        else:
            extra["status"] = "TERMINATED"
            extra["lastStartTimestamp"] = (sc.NOW - timedelta(days=50)).isoformat()
            extra["lastStopTimestamp"] = (sc.NOW - timedelta(days=sc.STOPPED_DAYS)).isoformat()
        iid = gcp.compute.add(PROJECT, "us-central1-a", m.name, "a2-highgpu-1g", **extra)
        if m.running:
            for at in sc.periods():
                gcp.publish(iid, 0, at + timedelta(seconds=30), sc.percent(m))
        ids[m.name] = iid
    return ids


def outcomes(result: StopIdleResult) -> dict[str, str]:
    return {o.item.instance.name or "": o.outcome.value for o in result.outcomes}


def test_lifetimes_exemptions_and_owners_on_gcp(
    gcp: GcpWorld, hook_server: HookServer, tmp_path: Path
) -> None:
    ids = build(gcp)
    names = {v: k for k, v in ids.items()}
    provider = gcp.provider()
    policy = sc.policy(SCOPE)
    owners = OwnerNotifier.of(policy, {sc.HOOK_ENV: hook_server.url})
    with Ledger(tmp_path / "l.db") as ledger:
        dry = run_stop_idle(policy, [provider], apply=False, now=sc.NOW, ledger=ledger)
        assert set(outcomes(dry).values()) == {"none"}
        first = run_stop_idle(
            policy, [provider], apply=True, now=sc.NOW, ledger=ledger, owners=owners
        )
        assert outcomes(first) == sc.FIRST
        told = {(names[n.instance_id], n.rule, n.state) for n in first.owner_notices}
        assert told == sc.TOLD_FIRST
        second = run_stop_idle(
            policy, [provider], apply=True, now=sc.LATER, ledger=ledger, owners=owners
        )
    assert outcomes(second) == sc.second("terminated")
    assert second.owner_notices == [] and len(hook_server.received) == 3
    assert gcp.compute.status(PROJECT, "old-stopped") is None  # deleted
    assert gcp.compute.status(PROJECT, "long-run") == "TERMINATED"  # GCP's word for stopped
    assert gcp.compute.status(PROJECT, "fresh") == "RUNNING"
    assert gcp.compute.status(PROJECT, "keep-valid") == "RUNNING"
    [snap] = gcp.compute.snapshots.values()
    assert snap["labels"][SNAPSHOT_OF_LABEL] == ids["old-stopped"]
    assert snap["sourceDisk"].endswith("/disks/old-stopped")
