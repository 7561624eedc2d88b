"""``gpuplan schedule`` on the Azure ARM fake: off-hours deallocate, on-hours start of only
what it deallocated. Azure keeps no last-start time, so a person's start during off-hours
is known from the ledger (an earlier run stopped it, and it runs again)."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.azure_world import SUB, AzureWorld
from tests.fakes.schedule_helpers import (
    OFFICE,
    THU_MORNING,
    WED_EVENING,
    WED_LATER,
    by_name,
    run_at,
    schedule_policy,
)

SCOPE = {"azure": {"subscriptions": [SUB]}}
SIZE = "Standard_NC24ads_A100_v4"


def test_deallocate_at_off_hours_and_start_only_ours(azure: AzureWorld, tmp_path: Path) -> None:
    ours = azure.fake.add_vm(SUB, "rg", "ours", SIZE, tags=OFFICE)
    persons = azure.fake.add_vm(SUB, "rg", "persons", SIZE, tags=OFFICE, power="deallocated")
    policy, db = schedule_policy(SCOPE), tmp_path / "l.db"

    evening = run_at(policy, [azure.provider()], db, WED_EVENING)
    assert evening.problems == [] and evening.aborted is None
    assert by_name(evening) == {"ours": "deallocated", "persons": "none"}
    assert azure.fake.power(ours) == "PowerState/deallocated"

    morning = run_at(policy, [azure.provider()], db, THU_MORNING)
    assert by_name(morning) == {"ours": "started", "persons": "none"}
    assert azure.fake.power(ours) == "PowerState/running"
    assert azure.fake.power(persons) == "PowerState/deallocated"
    assert azure.fake.calls["vms.start"] == 1


def test_a_person_who_starts_it_during_off_hours_keeps_it(
    azure: AzureWorld, tmp_path: Path
) -> None:
    ours = azure.fake.add_vm(SUB, "rg", "ours", SIZE, tags=OFFICE)
    policy, db = schedule_policy(SCOPE), tmp_path / "l.db"
    assert by_name(run_at(policy, [azure.provider()], db, WED_EVENING)) == {"ours": "deallocated"}
    # A person starts it in the portal at 21:00 Berlin.
    azure.fake.vms[ours.lower()]["properties"]["instanceView"]["statuses"][-1]["code"] = (
        "PowerState/running"
    )
    later = run_at(policy, [azure.provider()], db, WED_LATER)
    assert by_name(later) == {"ours": "none"}
    assert azure.fake.power(ours) == "PowerState/running"
    assert "a person started it during these off-hours" in later.outcomes[0].item.decision.reason
