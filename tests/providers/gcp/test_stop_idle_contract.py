"""The scenario table through the stop-idle use case on GCP wire fakes."""

from __future__ import annotations

from dataclasses import replace

from google.auth.credentials import AnonymousCredentials

from gpuplan.providers.gcp.entry import gcp_scopes
from gpuplan.usecases.clouds.adapters import BuildContext
from tests.fakes.contract import actions, policy, run
from tests.fakes.gcp_world import PROJECT, GcpWorld
from tests.fakes.scenarios import CASES

SCOPE = {"gcp": {"projects": [PROJECT]}}


def test_dry_run_stops_nothing_and_apply_stops_exactly_the_idle_ones(gcp: GcpWorld) -> None:
    for case in CASES:
        gcp.build(case)
    provider = gcp.provider()
    dry = run(policy(SCOPE), [provider], apply=False)
    assert dry.problems == [] and dry.aborted is None
    assert set(actions(dry).values()) == {"none"}
    assert gcp.compute.calls["stop"] == 0 and gcp.compute.calls["setLabels"] == 0

    applied = run(policy(SCOPE), [provider], apply=True)
    expected = {c.name: "stopped" if c.stopped_by_apply else "none" for c in CASES}
    assert actions(applied) == expected
    for case in CASES:
        status = gcp.compute.status(PROJECT, case.name)
        want = "TERMINATED" if case.stopped_by_apply or not case.running else "RUNNING"
        assert status == want, case.name
    labels = gcp.compute.instances[(PROJECT, "idle")]["labels"]
    assert labels["gpuplan-stopped-at"] == "20261202t101730z"
    assert labels["gpuplan-reason"] == "idle-60m-lt5pct"


def test_local_ssd_instances_are_skipped_unless_data_loss_is_allowed(gcp: GcpWorld) -> None:
    (idle,) = [c for c in CASES if c.name == "idle"]
    gcp.build(idle)
    gcp.compute.instances[(PROJECT, "idle")]["disks"].append({"type": "SCRATCH"})
    provider = gcp.provider()
    first = run(policy(SCOPE), [provider], apply=True)
    assert actions(first) == {"idle": "skipped"}
    assert "local SSD" in first.outcomes[0].item.note
    second = run(policy(SCOPE, allow_data_loss=True), [provider], apply=True)
    assert actions(second) == {"idle": "stopped"}
    assert gcp.compute.instances[(PROJECT, "idle")]["_discarded_local_ssd"] == "true"


def test_an_instance_deleted_between_plan_and_act_fails_alone(gcp: GcpWorld) -> None:
    (idle,) = [c for c in CASES if c.name == "idle"]
    gcp.build(idle)
    gcp.build(replace(idle, name="idle-2"))
    provider = gcp.provider()
    gcp.compute.fail("get", 404)  # the re-read right before acting: gone
    result = run(policy(SCOPE), [provider], apply=True)
    assert sorted(actions(result).values()) == ["failed", "stopped"]
    (gone,) = [o for o in result.outcomes if o.outcome == "failed"]
    assert "not found" in gone.detail
    assert result.failed


def test_a_stop_refused_by_the_cloud_fails_alone(gcp: GcpWorld) -> None:
    (idle,) = [c for c in CASES if c.name == "idle"]
    gcp.build(idle)
    gcp.build(replace(idle, name="idle-2"))
    gcp.compute.fail("stop", 404)
    result = run(policy(SCOPE), [gcp.provider()], apply=True)
    assert sorted(actions(result).values()) == ["failed", "stopped"]
    assert result.failed


def test_a_suspend_policy_suspends_through_the_use_case(gcp: GcpWorld) -> None:
    (idle,) = [c for c in CASES if c.name == "idle"]
    gcp.build(idle)
    suspend = policy(
        {
            "gcp": {
                "projects": [PROJECT],
                "compute_endpoint": gcp.compute_url,
                "monitoring_endpoint": "http://" + gcp.monitoring_address,
            }
        },
        action="suspend",
    )
    context = BuildContext(suspend, gcp.catalog, None, {})
    members = gcp_scopes(context, credentials=AnonymousCredentials())
    result = run(suspend, list(members.values()), apply=True)
    assert actions(result) == {"idle": "suspended"}
    assert gcp.compute.status(PROJECT, "idle") == "SUSPENDED"
    assert gcp.compute.calls["suspend"] == 1 and gcp.compute.calls["stop"] == 0
