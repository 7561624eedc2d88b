"""``gpuplan schedule``, ``simulate`` with schedules and ``policy check --db`` in-process:
moto for AWS, the wall clock frozen (freezegun) at a weekday evening in Berlin."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from freezegun import freeze_time

from gpuplan.cli.main import main
from gpuplan.ledger import DecisionRecord, Ledger
from tests.fakes.aws_world import World

WED_EVENING = datetime(2026, 12, 2, 19, 30, tzinfo=UTC)  # 20:30 in Berlin
THU_MORNING = datetime(2026, 12, 3, 7, 30, tzinfo=UTC)
POLICY = """\
version: 1
name: office
scope:
  aws: {regions: [us-east-1]}
idle: {allow_data_loss: true}
schedules:
  named:
    office: {timezone: Europe/Berlin, on_hours: "08:00", off_hours: "19:00"}
"""
EXAMPLE = Path(__file__).resolve().parents[2] / "policies" / "office-hours.yaml"


def call(args: list[str], at: datetime, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with freeze_time(at):
        code = main(args)
    out = capsys.readouterr()
    return code, out.out + out.err


def test_schedule_dry_run_then_apply_then_on_hours_start(
    world: World, tmp_path: Path, lc_catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vm = world.launch(tags={"gpuplan-schedule": "office"}, launched=WED_EVENING - timedelta(days=5))
    policy = tmp_path / "p.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    base = ["schedule", "--policy", str(policy), "--db", str(tmp_path / "l.db"),
            "--catalog-dir", str(lc_catalog_dir)]  # fmt: skip
    code, out = call([*base, "--json"], WED_EVENING, capsys)
    assert code == 0, out
    (decision,) = json.loads(out)["decisions"]
    assert (decision["planned_action"], decision["action"]) == ("stop", "none")
    assert world.state(vm) == "running"
    code, out = call([*base, "--apply"], WED_EVENING, capsys)
    assert code == 0, out
    assert "applied" in out and "off-hours since Wed 2026-12-02 19:00" in out
    assert world.state(vm) == "stopped"
    code, out = call([*base, "--apply", "--json"], THU_MORNING, capsys)
    assert code == 0, out
    assert json.loads(out)["decisions"][0]["action"] == "started"
    assert world.state(vm) == "running"


def test_a_bad_schedule_is_exit_2_and_nothing_is_done(
    world: World, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vm = world.launch(tags={"gpuplan-schedule": "office"})
    policy = tmp_path / "p.yaml"
    policy.write_text(POLICY.replace("Europe/Berlin", "Europe/Berlln"), encoding="utf-8")
    args = ["schedule", "--policy", str(policy), "--db", str(tmp_path / "l.db"), "--apply"]
    code, out = call(args, WED_EVENING, capsys)
    assert code == 2
    assert f"{policy}:8:" in out and "unknown time zone 'Europe/Berlln'" in out
    assert "Traceback" not in out
    assert world.state(vm) == "running"


def test_simulate_replays_the_schedules(
    lc_catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["simulate", "--policy", str(EXAMPLE), "--instances", "4", "--hours", "168",
            "--json"]  # fmt: skip
    code, out = call(args, WED_EVENING, capsys)
    assert code == 0, out
    by_name = {s["schedule"]: s for s in json.loads(out)["schedules"]}
    # One week from Monday 00:00 UTC (01:00 Berlin): office is on 5 x 11 h, late 6 x 17 h.
    assert by_name["office"]["off_hours"] == 4 * (168 - 55)
    assert by_name["late"]["off_hours"] == 4 * (168 - 102)
    assert Decimal(str(by_name["office"]["saved_usd"])) > Decimal(str(by_name["late"]["saved_usd"]))
    assert by_name["office"]["interrupted_busy_hours"] > 0


def test_policy_check_warns_of_busy_machines_off_hours_in_the_ledger(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "l.db"
    with Ledger(db) as ledger:
        for at, verdict in ((WED_EVENING, "busy"), (THU_MORNING + timedelta(hours=2), "busy")):
            run = ledger.start_run("stop-idle", "office-hours", at, dry_run=True)
            ledger.record_decision(
                run,
                DecisionRecord(
                    provider="aws", region="eu-central-1", instance_id="i-night",
                    instance_type="g5.xlarge", state="running", verdict=verdict,
                    reason="busy", planned_action="none", decided_at=at,
                    labels={"env": "dev"}, gpu_count=1,
                ),
            )  # fmt: skip
    code, out = call(["policy", "check", str(EXAMPLE), "--db", str(db)], THU_MORNING, capsys)
    assert code == 0, out
    warnings = [ln for ln in out.splitlines() if "warning:" in ln]
    assert warnings == [
        "gpuplan: warning: schedules.named.office: would have stopped 1 busy instance in the "
        "last week of the ledger (e.g. i-night, busy at Wed 2026-12-02 20:30 Europe/Berlin); "
        "check its hours and time zone, or tag such instances off"
    ]
    code, out = call(["policy", "check", str(EXAMPLE), "--db", str(tmp_path / "no.db")],
                     THU_MORNING, capsys)  # fmt: skip
    assert code == 2 and "no ledger there" in out
