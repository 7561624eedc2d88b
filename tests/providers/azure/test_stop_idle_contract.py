"""The scenario table through the stop-idle use case on Azure wire fakes."""

from __future__ import annotations

from dataclasses import replace

from tests.fakes.azure_world import SUB, AzureWorld
from tests.fakes.contract import actions, policy, run
from tests.fakes.scenarios import CASES

SCOPE = {"azure": {"subscriptions": [SUB]}}


def test_dry_run_stops_nothing_and_apply_deallocates_exactly_the_idle_ones(
    azure: AzureWorld,
) -> None:
    ids = {case.name: azure.build(case) for case in CASES}
    provider = azure.provider()
    dry = run(policy(SCOPE), [provider], apply=False)
    assert dry.problems == [] and dry.aborted is None
    assert set(actions(dry).values()) == {"none"}
    assert azure.fake.calls["vms.deallocate"] == 0 and azure.fake.calls["tags.update"] == 0
    assert {
        o.item.planned_action.value for o in dry.outcomes if o.item.instance.name == "idle"
    } == {"deallocate"}

    applied = run(policy(SCOPE), [provider], apply=True)
    expected = {c.name: "deallocated" if c.stopped_by_apply else "none" for c in CASES}
    assert actions(applied) == expected
    for case in CASES:
        off = case.stopped_by_apply or not case.running
        want = "PowerState/deallocated" if off else "PowerState/running"
        assert azure.fake.power(ids[case.name]) == want, case.name
    tags = azure.fake.vms[ids["idle"].lower()]["tags"]
    assert tags["gpuplan-reason"] == "idle-60m-lt5pct"


def test_a_vm_deleted_between_plan_and_act_fails_alone(azure: AzureWorld) -> None:
    (idle,) = [c for c in CASES if c.name == "idle"]
    azure.build(idle)
    azure.build(replace(idle, name="idle-2"))
    azure.fake.fail("vms.get", 404)
    result = run(policy(SCOPE), [azure.provider()], apply=True)
    assert sorted(actions(result).values()) == ["deallocated", "failed"]
    assert result.failed


def test_spot_vms_that_are_deleted_on_eviction_are_skipped_unless_terminating(
    azure: AzureWorld,
) -> None:
    (spot,) = [c for c in CASES if c.name == "spot"]
    rid = azure.build(spot)
    azure.fake.vms[rid.lower()]["properties"]["evictionPolicy"] = "Delete"
    provider = azure.provider()
    skipped = run(policy(SCOPE), [provider], apply=True)
    assert actions(skipped) == {"spot": "skipped"}
    assert "terminate" in skipped.outcomes[0].item.note
    assert azure.fake.calls["vms.deallocate"] == 0
    ended = run(policy(SCOPE, action="terminate"), [provider], apply=True)
    assert actions(ended) == {"spot": "terminated"}
    assert azure.fake.power(rid) is None
