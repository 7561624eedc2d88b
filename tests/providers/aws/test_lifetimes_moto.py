"""Lifetimes, exemptions and owner notices on moto (tests/fakes/lifetime_scenarios.py).

The stop time of the stopped instance is EC2's own (``StateTransitionReason``, set by
moto under a frozen clock 40 days ago); its snapshot is a real ``CreateSnapshots`` of its
root volume, tagged with the step's label, and then it is terminated.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from freezegun import freeze_time

from gpuplan.core.catalog.query import Catalog
from gpuplan.ledger import Ledger
from gpuplan.providers.aws.provider import SNAPSHOT_OF_TAG, AwsAdapter
from gpuplan.usecases.lifecycle.owner_notices import OwnerNotifier
from gpuplan.usecases.lifecycle.stop_idle import StopIdleResult, run_stop_idle
from tests.fakes import lifetime_scenarios as sc
from tests.fakes.aws_world import World, flat
from tests.fakes.policy_fixtures import HookServer

SCOPE = {"aws": {"regions": ["us-east-1"]}}


def build(world: World) -> dict[str, str]:
    ids: dict[str, str] = {}
    for m in sc.FLEET:
        tags = {"Name": m.name, **m.labels}
        launched = sc.NOW - (m.ran if m.running else timedelta(days=sc.STOPPED_DAYS + 10))
        iid = world.launch(tags=tags, launched=launched)
        if not m.running:
            with freeze_time(sc.NOW - timedelta(days=sc.STOPPED_DAYS)):
                world.stop(iid)
        else:
            world.publish(iid, flat(sc.percent(m)), periods=list(sc.periods()))
        ids[m.name] = iid
    return ids


def outcomes(result: StopIdleResult) -> dict[str, str]:
    return {o.item.instance.name or "": o.outcome.value for o in result.outcomes}


def told(result: StopIdleResult, names: dict[str, str]) -> set[tuple[str, str, str]]:
    return {(names[n.instance_id], n.rule, n.state) for n in result.owner_notices}


def test_lifetimes_exemptions_and_owners_on_moto(
    world: World, lc_catalog: Catalog, hook_server: HookServer, tmp_path: Path
) -> None:
    ids = build(world)
    names = {v: k for k, v in ids.items()}
    ec2 = world.client("ec2", "us-east-1")
    aws = AwsAdapter(
        "us-east-1",
        ec2_client=ec2,
        cloudwatch_client=world.client("cloudwatch", "us-east-1"),
        catalog=lc_catalog,
    )
    policy = sc.policy(SCOPE)
    owners = OwnerNotifier.of(policy, {sc.HOOK_ENV: hook_server.url})
    with Ledger(tmp_path / "l.db") as ledger:
        dry = run_stop_idle(policy, [aws], apply=False, now=sc.NOW, ledger=ledger, owners=owners)
        assert set(outcomes(dry).values()) == {"none"} and dry.owner_notices == []
        first = run_stop_idle(policy, [aws], apply=True, now=sc.NOW, ledger=ledger, owners=owners)
        assert outcomes(first) == sc.FIRST
        assert told(first, names) == sc.TOLD_FIRST
        second = run_stop_idle(
            policy, [aws], apply=True, now=sc.LATER, ledger=ledger, owners=owners
        )
        steps = ledger.select("SELECT provider_call, state, made FROM action_steps ORDER BY id")
    assert outcomes(second) == sc.second("terminated")
    assert second.owner_notices == []  # each owner told once
    assert len(hook_server.received) == 3
    assert world.state(ids["old-stopped"]) == "terminated"
    assert world.state(ids["long-run"]) == "stopped"
    assert world.state(ids["fresh"]) == "running"
    assert world.state(ids["keep-valid"]) == "running"
    snaps = ec2.describe_snapshots(
        OwnerIds=["self"],
        Filters=[{"Name": f"tag:{SNAPSHOT_OF_TAG}", "Values": [ids["old-stopped"]]}],
    )["Snapshots"]
    assert len(snaps) == 1
    assert [(r[0], r[1]) for r in steps] == [("snapshot", "done"), ("terminate", "done")]
    assert snaps[0]["SnapshotId"] in steps[0][2]
    long_run = next(o for o in second.outcomes if o.item.instance.name == "long-run")
    assert long_run.item.decision.reason.startswith("max_runtime: running 3.4 days")
    assert world.tags(ids["long-run"])["gpuplan-reason"] == "lifetime-max-runtime"
