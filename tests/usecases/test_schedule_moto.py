"""``gpuplan schedule`` on moto with a frozen clock: which instances stop and start.

Schedule ``office``: Europe/Berlin, 08:00-19:00 Monday to Friday, Christmas Eve and
Christmas Day off. Times below are UTC (Berlin is UTC+1 in December).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from gpuplan.core.catalog.query import Catalog
from gpuplan.core.policy import Policy
from gpuplan.ledger import PENDING, ActionRecord, Ledger
from gpuplan.usecases.lifecycle.schedule import run_schedule
from gpuplan.usecases.lifecycle.stop_idle import StopIdleResult, result_record
from tests.fakes.aws_helpers import providers
from tests.fakes.aws_world import World

WED_EVENING = datetime(2026, 12, 2, 19, 30, tzinfo=UTC)  # 20:30 in Berlin
WED_LATER = datetime(2026, 12, 2, 21, 30, tzinfo=UTC)
THU_MORNING = datetime(2026, 12, 3, 7, 30, tzinfo=UTC)  # 08:30 in Berlin
THU_NOON = datetime(2026, 12, 3, 11, 0, tzinfo=UTC)
SAT_NOON = datetime(2026, 12, 5, 11, 0, tzinfo=UTC)
XMAS_EVE = datetime(2026, 12, 24, 10, 0, tzinfo=UTC)  # a Thursday, a holiday
LONG_AGO = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def schedule_policy(**schedules: Any) -> Policy:
    return Policy.model_validate(
        {
            "version": 1,
            "name": "research",
            "scope": {"aws": {"regions": ["us-east-1"]}},
            # g5 carries instance-store NVMe, which every stop erases.
            "idle": {"allow_data_loss": True},
            "schedules": {
                "named": {
                    "office": {
                        "timezone": "Europe/Berlin",
                        "on_hours": "08:00",
                        "off_hours": "19:00",
                        "holidays": ["2026-12-24", "2026-12-25"],
                    },
                    "late": {
                        "timezone": "Europe/Berlin",
                        "on_hours": "06:00",
                        "off_hours": "23:00",
                    },
                },
                **schedules,
            },
        }
    )


def run(world: World, catalog: Catalog, db: Path, now: datetime, **kw: Any) -> StopIdleResult:
    policy = kw.pop("policy", None) or schedule_policy()
    with Ledger(db) as ledger:
        return run_schedule(
            policy, providers(world, catalog, ["us-east-1"]), now=now, ledger=ledger, **kw
        )


def actions(result: StopIdleResult) -> dict[str, str]:
    return {d["instance_id"]: d["action"] for d in result_record(result)["decisions"]}


def office(world: World, **tags: str) -> str:
    return world.launch(tags={"gpuplan-schedule": "office", **tags}, launched=LONG_AGO)


def test_weekday_evening_stops_exactly_the_scheduled_ones(
    world: World, lc_catalog: Catalog, tmp_path: Path
) -> None:
    scheduled = office(world)
    untagged = world.launch(launched=LONG_AGO)
    opted_out = world.launch(tags={"gpuplan-schedule": "off"}, launched=LONG_AGO)
    late = world.launch(tags={"gpuplan-schedule": "late"}, launched=LONG_AGO)
    exempt = office(world, **{"gpuplan-keep": "yes"})
    unknown = world.launch(tags={"gpuplan-schedule": "bogus"}, launched=LONG_AGO)
    db = tmp_path / "l.db"

    dry = run(world, lc_catalog, db, WED_EVENING, apply=False)
    assert world.state(scheduled) == "running"  # dry run by default: nothing changes
    planned = {d["instance_id"]: d for d in result_record(dry)["decisions"]}
    assert planned[scheduled]["planned_action"] == "stop"
    assert "off-hours since Wed 2026-12-02 19:00" in planned[scheduled]["reason"]

    result = run(world, lc_catalog, db, WED_EVENING, apply=True)
    assert not result.failed, result.problems
    got = actions(result)
    assert got[scheduled] == "stopped"
    assert {got[i] for i in (untagged, opted_out, late, exempt, unknown)} == {"none"}
    assert world.state(scheduled) == "stopped"
    assert world.tags(scheduled)["gpuplan-reason"] == "offhours-office"
    for other in (untagged, opted_out, late, exempt, unknown):
        assert world.state(other) == "running"
    reasons = {d["instance_id"]: d["reason"] for d in result_record(result)["decisions"]}
    assert "names no schedule" in reasons[unknown]
    assert "exempt" in reasons[exempt]
    assert "on-hours" in reasons[late]
    with Ledger(db) as ledger:
        runs = ledger.runs()
        assert [r.kind for r in runs] == ["schedule", "schedule"]
        rows = ledger.select("SELECT instance_id, action, outcome FROM actions")
    assert (scheduled, "stop", "stopped") in rows


def test_on_hours_start_only_what_the_schedule_stopped(
    world: World, lc_catalog: Catalog, tmp_path: Path
) -> None:
    ours = office(world)
    persons = office(world)
    world.stop(persons)  # a person stopped it during on-hours, before the schedule ran
    db = tmp_path / "l.db"
    run(world, lc_catalog, db, WED_EVENING, apply=True)
    assert world.state(ours) == "stopped"

    morning = run(world, lc_catalog, db, THU_MORNING, apply=True)
    got = actions(morning)
    assert got[ours] == "started"
    assert got[persons] == "none"
    assert world.state(ours) == "running"
    assert world.state(persons) == "stopped"
    assert "gpuplan-reason" not in world.tags(ours)
    reason = {d["instance_id"]: d["reason"] for d in result_record(morning)["decisions"]}
    assert "not by gpuplan schedule" in reason[persons]
    # Later in the day: nothing more to do.
    assert set(actions(run(world, lc_catalog, db, THU_NOON, apply=True)).values()) == {"none"}


def test_a_person_who_starts_it_during_off_hours_keeps_it(
    world: World, lc_catalog: Catalog, tmp_path: Path
) -> None:
    early = office(world)
    db = tmp_path / "l.db"
    run(world, lc_catalog, db, WED_EVENING, apply=True)
    with freeze_time(WED_EVENING + timedelta(minutes=30)):
        world.client("ec2", "us-east-1").start_instances(InstanceIds=[early])
    # Launched by a person during the off-hours, never stopped by the schedule:
    night_owl = world.launch(
        tags={"gpuplan-schedule": "office"}, launched=WED_EVENING + timedelta(minutes=45)
    )
    later = run(world, lc_catalog, db, WED_LATER, apply=True)
    got = actions(later)
    assert got[early] == "none" and got[night_owl] == "none"
    assert world.state(early) == "running" and world.state(night_owl) == "running"
    reason = {d["instance_id"]: d["reason"] for d in result_record(later)["decisions"]}
    assert "a person started it during these off-hours" in reason[early] or (
        "during these off-hours" in reason[early]
    )
    # Next morning it is running: nothing to start; it is not stopped again that night...
    assert actions(run(world, lc_catalog, db, THU_MORNING, apply=True))[early] == "none"
    # ...but at the next off-hours it follows the schedule again.
    thu_evening = WED_EVENING + timedelta(days=1)
    assert actions(run(world, lc_catalog, db, thu_evening, apply=True))[early] == "stopped"


def test_enforce_off_hours_stops_it_again(
    world: World, lc_catalog: Catalog, tmp_path: Path
) -> None:
    vm = office(world)
    db = tmp_path / "l.db"
    run(world, lc_catalog, db, WED_EVENING, apply=True)
    with freeze_time(WED_EVENING + timedelta(minutes=30)):
        world.client("ec2", "us-east-1").start_instances(InstanceIds=[vm])
    strict = schedule_policy(enforce_off_hours=True)
    assert actions(run(world, lc_catalog, db, WED_LATER, apply=True, policy=strict))[vm] == (
        "stopped"
    )


def test_weekend_and_holiday_are_off_all_day(
    world: World, lc_catalog: Catalog, tmp_path: Path
) -> None:
    weekend = office(world)
    db = tmp_path / "l.db"
    got = run(world, lc_catalog, db, SAT_NOON, apply=True)
    assert actions(got)[weekend] == "stopped"
    assert "since Fri 2026-12-04 19:00" in result_record(got)["decisions"][0]["reason"]

    holiday = world.launch(
        tags={"gpuplan-schedule": "office"}, launched=XMAS_EVE - timedelta(days=2)
    )
    got = run(world, lc_catalog, tmp_path / "h.db", XMAS_EVE, apply=True)
    assert actions(got)[holiday] == "stopped"
    assert world.state(holiday) == "stopped"


def test_applies_to_all_with_a_tag_override(
    world: World, lc_catalog: Catalog, tmp_path: Path
) -> None:
    untagged = world.launch(launched=LONG_AGO)
    opted_out = world.launch(tags={"gpuplan-schedule": "off"}, launched=LONG_AGO)
    late = world.launch(tags={"gpuplan-schedule": "late"}, launched=LONG_AGO)
    policy = schedule_policy(applies_to="all", default="office")
    got = actions(run(world, lc_catalog, tmp_path / "l.db", WED_EVENING, apply=True, policy=policy))
    assert got == {untagged: "stopped", opted_out: "none", late: "none"}
    at_23 = datetime(2026, 12, 2, 22, 30, tzinfo=UTC)  # 23:30 Berlin: late's off-hours too
    got = actions(run(world, lc_catalog, tmp_path / "l.db", at_23, apply=True, policy=policy))
    assert got[late] == "stopped" and got[opted_out] == "none"


def test_the_data_loss_guard_holds_for_scheduled_stops(
    world: World, lc_catalog: Catalog, tmp_path: Path
) -> None:
    vm = office(world)
    policy = schedule_policy()
    careful = policy.model_copy(
        update={"idle": policy.idle.model_copy(update={"allow_data_loss": False})}
    )
    result = run(world, lc_catalog, tmp_path / "l.db", WED_EVENING, apply=True, policy=careful)
    decision = result_record(result)["decisions"][0]
    assert decision["action"] == "skipped" and decision["skip"] == "data loss"
    assert world.state(vm) == "running"


def test_the_cap_defers_scheduled_stops(world: World, lc_catalog: Catalog, tmp_path: Path) -> None:
    vms = [office(world) for _ in range(3)]
    policy = schedule_policy()
    capped = policy.model_copy(
        update={"idle": policy.idle.model_copy(update={"max_actions_per_run": 2})}
    )
    got = actions(run(world, lc_catalog, tmp_path / "l.db", WED_EVENING, apply=True, policy=capped))
    assert sorted(got[v] for v in vms) == ["deferred", "stopped", "stopped"]


def test_a_killed_runs_start_is_settled_by_the_next_schedule_run(
    world: World, lc_catalog: Catalog, tmp_path: Path
) -> None:
    vm = office(world)
    db = tmp_path / "l.db"
    run(world, lc_catalog, db, WED_EVENING, apply=True)
    with Ledger(db) as ledger:  # a run killed between its start intent and the answer
        killed = ledger.start_run("schedule", "research", THU_MORNING, dry_run=False)
        ledger.record_action(
            killed,
            ActionRecord(
                provider="aws", region="us-east-1", instance_id=vm, action="start",
                outcome=PENDING, acted_at=THU_MORNING, scope="aws us-east-1",
            ),
        )  # fmt: skip
    world.client("ec2", "us-east-1").start_instances(InstanceIds=[vm])  # the call went through
    result = run(world, lc_catalog, db, THU_MORNING + timedelta(minutes=30), apply=True)
    assert [(r.instance_id, r.outcome.value) for r in result.reconciled] == [(vm, "started")]
    assert actions(result)[vm] == "none"  # running in on-hours: nothing more to do
    with Ledger(db) as ledger:
        assert ledger.pending_actions() == []


EVERY_DAY = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]


def _zone_policy(zone: str, on: str, off: str) -> Policy:
    return Policy.model_validate(
        {
            "version": 1,
            "name": "research",
            "scope": {"aws": {"regions": ["us-east-1"]}},
            "idle": {"allow_data_loss": True},
            "schedules": {
                "applies_to": "all",
                "default": "day",
                "named": {
                    "day": {"timezone": zone, "on_hours": on, "off_hours": off,
                            "weekdays": EVERY_DAY}
                },
            },
        }
    )  # fmt: skip


@pytest.mark.parametrize(
    ("zone", "on", "off", "still_off", "now_on"),
    [
        # Berlin, last Sunday of March: 08:00 is 07:00 UTC on Saturday, 06:00 UTC on Sunday.
        ("Europe/Berlin", "08:00", "19:00",
         datetime(2026, 3, 28, 6, 30, tzinfo=UTC), datetime(2026, 3, 29, 6, 30, tzinfo=UTC)),
        # New York, first Sunday of November: 09:00 is 14:00 UTC on Sunday (13:00 before).
        ("America/New_York", "09:00", "18:00",
         datetime(2026, 11, 1, 13, 30, tzinfo=UTC), datetime(2026, 11, 1, 14, 30, tzinfo=UTC)),
    ],
)  # fmt: skip
def test_daylight_saving_moves_the_utc_hour_of_a_stop_and_a_start(
    zone: str,
    on: str,
    off: str,
    still_off: datetime,
    now_on: datetime,
    world: World,
    lc_catalog: Catalog,
    tmp_path: Path,
) -> None:
    policy = _zone_policy(zone, on, off)
    vm = world.launch(launched=still_off - timedelta(days=3))
    db = tmp_path / "l.db"
    # At the same UTC hour as the on-hours start of the other side of the change: off.
    assert actions(run(world, lc_catalog, db, still_off, apply=True, policy=policy))[vm] == (
        "stopped"
    )
    # After the change the same UTC hour (Berlin) or an hour later (New York) is on-hours.
    assert actions(run(world, lc_catalog, db, now_on, apply=True, policy=policy))[vm] == ("started")
    assert world.state(vm) == "running"
