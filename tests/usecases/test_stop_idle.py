"""stop-idle on moto: the scenario table end to end through the use case."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from gpuplan.core.catalog.query import Catalog
from gpuplan.ledger import Ledger
from gpuplan.usecases.lifecycle.session import LockBusy, run_lock
from gpuplan.usecases.lifecycle.stop_idle import result_record, run_stop_idle
from gpuplan.usecases.lifecycle.survey import idle_rule, survey
from tests.fakes import aws_scenarios as scenarios
from tests.fakes.aws_helpers import Faults, policy, providers
from tests.fakes.aws_world import NOW, PERIODS, World, flat


def by_id(record: dict[str, object]) -> dict[str, dict[str, object]]:
    return {d["instance_id"]: d for d in record["decisions"]}  # type: ignore[index,union-attr]


def test_dry_run_stops_nothing(world: World, lc_catalog: Catalog, tmp_path: Path) -> None:
    rows = scenarios.build(world)
    with Ledger(tmp_path / "l.db") as ledger:
        result = run_stop_idle(
            policy(), providers(world, lc_catalog), apply=False, now=NOW, ledger=ledger
        )
        assert ledger.count("decisions") == len(rows)
        assert ledger.count("actions") == 0
    got = by_id(result_record(result))
    assert {r.name: got[r.instance_id]["verdict"] for r in rows} == {
        r.name: r.verdict for r in rows
    }
    assert all(d["action"] == "none" for d in got.values())
    assert got[rows[0].instance_id]["planned_action"] == "stop"
    assert not result.failed
    assert all(
        world.state(r.instance_id, r.region)
        == ("stopped" if r.name == "already-stopped" else "running")
        for r in rows
    )


def test_apply_stops_exactly_the_idle_ones(
    world: World, lc_catalog: Catalog, tmp_path: Path
) -> None:
    rows = scenarios.build(world)
    with Ledger(tmp_path / "l.db") as ledger:
        result = run_stop_idle(
            policy(), providers(world, lc_catalog), apply=True, now=NOW, ledger=ledger
        )
        assert ledger.count("actions") == 4  # three stops and the skipped spot
        assert ledger.runs()[0].status == "ok"
    got = by_id(result_record(result))
    assert {r.name: got[r.instance_id]["action"] for r in rows} == {r.name: r.applied for r in rows}
    for r in rows:
        expected = "stopped" if r.applied == "stopped" or r.name == "already-stopped" else "running"
        assert world.state(r.instance_id, r.region) == expected, r.name
    idle = next(r for r in rows if r.name == "idle")
    tags = world.tags(idle.instance_id)
    assert tags["gpuplan-stopped-at"] == "20261202t101730z"
    assert tags["gpuplan-reason"] == "idle-60m-lt5pct"
    spot = next(r for r in rows if r.name == "one-time-spot")
    assert "one-time spot" in str(got[spot.instance_id]["detail"])
    scarce = next(r for r in rows if r.name == "8-gpu-idle-scarce")
    assert any("scarce" in w for w in got[scarce.instance_id]["warnings"])  # type: ignore[union-attr]
    assert not result.failed


def test_the_cap_defers_the_rest_to_the_next_run(
    world: World, lc_catalog: Catalog, tmp_path: Path
) -> None:
    # Issue 25: on main more idle instances than the cap aborted the whole run (exit 1).
    rows = scenarios.build(world)
    with Ledger(tmp_path / "l.db") as ledger:
        result = run_stop_idle(
            policy(max_actions_per_run=2),
            providers(world, lc_catalog),
            apply=True,
            now=NOW,
            ledger=ledger,
        )
        assert ledger.runs()[0].status == "ok"
    assert not result.failed and result.aborted is None
    got = by_id(result_record(result))
    actions = {r.name: got[r.instance_id]["action"] for r in rows if r.applied == "stopped"}
    # the p5 (most dollars at stake) first; one of the two g5s waits for the next run
    assert actions["8-gpu-idle-scarce"] == "stopped"
    assert sorted(actions.values()) == ["deferred", "stopped", "stopped"]
    late = next(d for d in got.values() if d["action"] == "deferred")
    assert str(late["detail"]).startswith("deferred: cap 2 reached")
    assert world.state(str(late["instance_id"]), str(late["region"])) == "running"


def test_the_breaker_aborts_and_does_nothing(world: World, lc_catalog: Catalog) -> None:
    rows = scenarios.build(world)
    strict = policy(breaker_percent=10, breaker_min_actions=2)
    for apply in (False, True):
        result = run_stop_idle(strict, providers(world, lc_catalog), apply=apply, now=NOW)
        assert result.failed and result.aborted
        assert result.aborted.startswith("circuit breaker: 3 of ")
        assert "breaker_percent = 10%" in result.aborted
        assert all(
            world.state(r.instance_id, r.region) == "running" for r in rows if r.name == "idle"
        )
        acted = [d["action"] for d in by_id(result_record(result)).values()]
        assert "stopped" not in acted


def test_notice_period(world: World, lc_catalog: Catalog) -> None:
    longer = [PERIODS[0] + timedelta(minutes=5 * n) for n in range(24)]
    quiet = world.launch(tags={"team": "research"})
    world.publish(quiet, flat(1.0), periods=longer)
    wakes = world.launch(tags={"team": "research"})
    world.publish(wakes, lambda g, p: 90.0 if p >= 15 else 1.0, periods=longer)
    pol = policy(notice_minutes=30)
    east = providers(world, lc_catalog, ["us-east-1"])

    first = by_id(result_record(run_stop_idle(pol, east, apply=True, now=NOW)))
    assert first[quiet]["action"] == first[wakes]["action"] == "notified"
    assert world.tags(quiet)["gpuplan-stop-after"] == "20261202t104730z"
    assert world.state(quiet) == "running"

    later = NOW + timedelta(minutes=20)
    second = by_id(result_record(run_stop_idle(pol, east, apply=True, now=later)))
    assert second[quiet]["action"] == "none" and "notice runs until" in str(second[quiet]["detail"])
    assert second[wakes]["verdict"] == "busy"
    assert "gpuplan-stop-after" not in world.tags(wakes)

    done = NOW + timedelta(minutes=35)
    third = by_id(result_record(run_stop_idle(pol, east, apply=True, now=done)))
    assert third[quiet]["action"] == "stopped"
    assert world.state(quiet) == "stopped"
    assert "gpuplan-stop-after" not in world.tags(quiet)


class StopsAfterSurvey:
    """Wraps the real adapter; stops one instance behind its back once the survey is
    done, as a person (or another gpuplan) would between plan and act."""

    def __init__(self, inner: object, world: World, victim: str) -> None:
        self._inner, self._world, self._victim, self._fetches = inner, world, victim, 0

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)

    def fetch_utilisation(self, *args: object, **kw: object) -> object:
        out = self._inner.fetch_utilisation(*args, **kw)  # type: ignore[attr-defined]
        self._fetches += 1
        if self._fetches == 1:
            self._world.stop(self._victim)
        return out


def test_state_changed_between_plan_and_act(world: World, lc_catalog: Catalog) -> None:
    a = world.launch(tags={"team": "research"})
    b = world.launch(tags={"team": "research"})
    for iid in (a, b):
        world.publish(iid, flat(0.0))
    (east,) = providers(world, lc_catalog, ["us-east-1"])
    wrapped = StopsAfterSurvey(east, world, a)
    result = run_stop_idle(policy(), [wrapped], apply=True, now=NOW)  # type: ignore[list-item]
    got = by_id(result_record(result))
    assert got[a]["action"] == "skipped"
    assert "state changed to stopped" in str(got[a]["detail"])
    assert got[b]["action"] == "stopped"
    assert "gpuplan-stopped-at" not in world.tags(a)


def test_throttling_is_retried(world: World, lc_catalog: Catalog) -> None:
    iid = world.launch(tags={"team": "research"})
    world.publish(iid, flat(0.0))
    (east,) = providers(world, lc_catalog, ["us-east-1"])
    faults = Faults(400, "Throttling", times=2)
    world.client("cloudwatch", "us-east-1").meta.events.register_first(
        "before-send.cloudwatch.GetMetricData", faults
    )
    result = run_stop_idle(policy(), [east], apply=False, now=NOW)
    assert faults.sent == 3  # two throttled, then through
    assert by_id(result_record(result))[iid]["verdict"] == "idle"
    assert not result.problems


def test_one_region_failing_leaves_the_other_handled(world: World, lc_catalog: Catalog) -> None:
    east_id = world.launch(tags={"team": "research"})
    west_id = world.launch(tags={"team": "research"}, region="us-west-2")
    world.publish(east_id, flat(0.0))
    world.publish(west_id, flat(0.0), region="us-west-2")
    faults = Faults(503, "ServiceUnavailable", times=1000)
    world.client("ec2", "us-east-1").meta.events.register_first(
        "before-send.ec2.DescribeInstances", faults
    )
    result = run_stop_idle(policy(), providers(world, lc_catalog), apply=True, now=NOW)
    assert result.failed
    assert any("us-east-1" in p and "listing failed" in p for p in result.problems), result.problems
    assert faults.sent > 1  # retried before giving up
    assert by_id(result_record(result))[west_id]["action"] == "stopped"
    assert world.state(west_id, "us-west-2") == "stopped"


def test_cloudwatch_down_means_unknown_never_idle(world: World, lc_catalog: Catalog) -> None:
    iid = world.launch(tags={"team": "research"})
    world.publish(iid, flat(0.0))
    world.client("cloudwatch", "us-east-1").meta.events.register_first(
        "before-send.cloudwatch.ListMetrics", Faults(500, "InternalFailure", times=1000)
    )
    result = run_stop_idle(
        policy(), providers(world, lc_catalog, ["us-east-1"]), apply=True, now=NOW
    )
    got = by_id(result_record(result))[iid]
    assert (got["verdict"], got["action"]) == ("unknown", "none")
    assert "GPU metrics unavailable" in str(got["reason"])
    assert world.state(iid) == "running" and result.failed


def test_second_run_waits_then_exits_cleanly(tmp_path: Path) -> None:
    lock = tmp_path / "ledger.sqlite3.lock"
    with (
        run_lock(lock, 0),
        pytest.raises(LockBusy, match="another stop-idle run"),
        run_lock(lock, 0.3),
    ):
        pass
    with run_lock(lock, 0):
        pass  # released again


def test_narrowed_to_chosen_instances(world: World, lc_catalog: Catalog) -> None:
    a = world.launch(tags={"team": "research"})
    b = world.launch(tags={"team": "research"})
    for iid in (a, b):
        world.publish(iid, flat(0.0))
    east = providers(world, lc_catalog, ["us-east-1"])
    result = run_stop_idle(policy(), east, apply=True, now=NOW, instance_ids={b})
    assert [d["instance_id"] for d in result_record(result)["decisions"]] == [b]
    assert (world.state(a), world.state(b)) == ("running", "stopped")
    seen = survey(east, idle_rule(policy()), NOW, {a})
    (only,) = seen.seen
    assert only.samples is not None and len(only.samples.utilisation["0"]) == 12
