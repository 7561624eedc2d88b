"""End to end: the installed ``gpuplan stop-idle`` against ``moto_server`` on loopback,
configured only through AWS_ENDPOINT_URL and fake credentials."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from tests.fakes.aws_world import flat
from tests.fakes.moto_server import POLICY, idle_periods, installed_bin, world_on


def test_stop_idle_apply_json(
    server: str, tmp_path: Path, lc_catalog_dir: Path, aws_env: None
) -> None:
    world = world_on(server)
    now = datetime.now(UTC)
    periods = idle_periods(now)
    idle = world.launch(tags={"team": "research"}, launched=now)
    busy = world.launch(tags={"team": "research"}, launched=now)
    silent = world.launch(tags={"team": "research"}, launched=now)
    world.publish(idle, flat(1.0), periods=periods)
    world.publish(busy, flat(75.0), periods=periods)
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY, encoding="utf-8")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "AWS_ENDPOINT_URL": server,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "GPUPLAN_DB": str(tmp_path / "ledger.sqlite3"),
    }
    cmd = [installed_bin("gpuplan"), "stop-idle", "--policy", str(policy), "--apply", "--json"]
    cmd += ["--catalog-dir", str(lc_catalog_dir)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    got = {d["instance_id"]: d for d in out["decisions"]}
    assert (got[idle]["verdict"], got[idle]["action"]) == ("idle", "stopped")
    assert (got[busy]["verdict"], got[busy]["action"]) == ("busy", "none")
    assert (got[silent]["verdict"], got[silent]["action"]) == ("unknown", "none")
    assert got[idle]["hourly_usd"] == 1.006 and got[idle]["provider"] == "aws"
    for key in ("region", "zone", "instance_type", "state", "reason", "planned_action"):
        assert key in got[idle]
    assert world.state(idle) == "stopped" and world.state(busy) == "running"

    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    second = {d["instance_id"]: d for d in json.loads(again.stdout)["decisions"]}
    assert second[idle]["verdict"] == "out_of_scope" and second[idle]["action"] == "none"


def test_bad_policy_exits_2_and_stops_nothing(tmp_path: Path) -> None:
    policy = tmp_path / "bad.yaml"
    policy.write_text("version: 1\nname: x\nidle: {threshold_percent: 150}\n", encoding="utf-8")
    done = subprocess.run(
        [installed_bin("gpuplan"), "stop-idle", "--policy", str(policy), "--apply", "--json"],
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "threshold_percent" in done.stderr and "Traceback" not in done.stderr
