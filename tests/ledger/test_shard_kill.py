"""A shard killed mid-call (issue 28, items 1 and 2), on SQLite and a real PostgreSQL.

Two AWS regions split over two shards (``aws us-east-1`` -> 0, ``aws us-east-2`` -> 1).
Shard 1 runs the installed ``gpuplan stop-idle --apply`` against ``moto_server``
through a proxy that holds its StopInstances answer; the test SIGKILLs it there (moto
has stopped the instance; the ledger holds a ``pending`` intent, the instance a lease
tag). Shard 0's next run must leave that intent alone (it could not have made it);
shard 1's next run records the stop as done, removes the stale lease tag and closes
the killed run, which ``history`` then shows as ``killed``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gpuplan.core.lifecycle.idle import STOPPED_AT_TAG
from gpuplan.core.lifecycle.shard import shard_of
from gpuplan.ledger import Ledger
from gpuplan.usecases.lifecycle.journal import LEASE_TAG
from tests.conftest import write_catalog
from tests.fakes.aws_world import World, flat
from tests.fakes.moto_fixtures import LC_AWS_ROWS
from tests.fakes.moto_server import idle_periods, installed_bin, world_on
from tests.usecases.holding_proxy import Hold, holding_proxy

TEAM = {"team": "research"}
REGIONS = ("us-east-1", "us-east-2")
POLICY = """\
version: 1
name: e2e
scope:
  aws: {regions: [us-east-1, us-east-2]}
  match_labels: {team: research}
idle:
  window_minutes: 30
  grace_minutes: 0
  allow_data_loss: true  # g5.xlarge carries a 250 GB NVMe instance store
"""
EAST_2 = "g5.xlarge,us-east-2,A10G,1,24,4,16,PCIe,10,1.006,0.45,use2-az1,0.63,0.43,2026-12-01,test"


@dataclass
class Scene:
    world: World
    env: dict[str, str]
    cmd: list[str]
    db: str
    ids: dict[str, str]
    """Region -> the idle instance launched there."""
    hold: Hold

    def run(self, *extra: str) -> tuple[int, dict[str, Any], str]:
        done = subprocess.run(
            [*self.cmd, *extra], env=self.env, capture_output=True, text=True, timeout=120
        )
        assert "Traceback" not in done.stderr, done.stderr
        return done.returncode, json.loads(done.stdout or "{}"), done.stderr

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        with Ledger(self.db) as ledger:
            return ledger.select(sql)


@pytest.fixture
def scene(server: str, tmp_path: Path, location: str, aws_env: None) -> Iterator[Scene]:
    assert [shard_of(f"aws {r}", 2) for r in REGIONS] == [0, 1]  # the split relied on
    world = world_on(server)
    session = world.session
    for service in ("ec2", "cloudwatch"):
        world.clients[(service, "us-east-2")] = session.client(
            service, region_name="us-east-2", endpoint_url=server
        )
    now = datetime.now(UTC)
    ids = {}
    for region in REGIONS:
        ids[region] = world.launch(region=region, tags=TEAM, launched=now)
        world.publish(ids[region], flat(1.0), region=region, periods=idle_periods(now))
    catalog = write_catalog(tmp_path / "pricing", aws=[*LC_AWS_ROWS, EAST_2], gcp=[], azure=[])
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(POLICY, encoding="utf-8")
    hold = Hold("StopInstances")
    with holding_proxy(server, hold) as proxy:
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "AWS_ENDPOINT_URL": proxy,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "PGPASSWORD": os.environ.get("PGPASSWORD", ""),
        }
        cmd = [installed_bin("gpuplan"), "stop-idle", "--policy", str(policy_file), "--db"]
        cmd += [location, "--apply", "--json", "--catalog-dir", str(catalog)]
        yield Scene(world, env, cmd, location, ids, hold)


def _kill_shard_1_mid_call(scene: Scene) -> str:
    child = subprocess.Popen(
        [*scene.cmd, "--shard", "1/2"], env=scene.env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert scene.hold.seen.wait(60), "shard 1 never called StopInstances"
    child.kill()
    child.communicate(timeout=30)
    scene.hold.release.set()
    return scene.ids["us-east-2"]


def test_a_killed_shards_stop_is_settled_by_its_own_next_run(scene: Scene) -> None:
    killed = _kill_shard_1_mid_call(scene)
    assert scene.world.state(killed, "us-east-2") == "stopped"  # the cloud acted
    assert LEASE_TAG in scene.world.tags(killed, "us-east-2")
    pending = "SELECT instance_id FROM actions WHERE outcome = 'pending'"
    assert scene.rows(pending) == [(killed,)]

    # Shard 0 could not have made that intent (us-east-2 is not its scope): left alone.
    code, out, err = scene.run("--shard", "0/2")
    assert code == 0, err
    assert out["reconciled"] == []
    assert scene.rows(pending) == [(killed,)]
    assert scene.world.state(scene.ids["us-east-1"]) == "stopped"  # its own work done
    assert scene.rows("SELECT shard, status FROM runs ORDER BY id") == [
        ("1/2", "running"),  # dead, but its intent is not shard 0's to settle
        ("0/2", "ok"),
    ]

    # Shard 1's next run settles it as done, tags the stop, drops the stale lease.
    code, out, err = scene.run("--shard", "1/2")
    assert code == 0, err
    assert [(r["instance_id"], r["outcome"]) for r in out["reconciled"]] == [(killed, "stopped")]
    tags = scene.world.tags(killed, "us-east-2")
    assert LEASE_TAG not in tags and STOPPED_AT_TAG in tags
    assert scene.rows(pending) == []
    assert scene.rows(
        f"SELECT outcome FROM actions WHERE instance_id = '{killed}' ORDER BY id"
    ) == [("stopped",)]

    # The killed run is closed: status, when, and by which run.
    history = subprocess.run(
        [installed_bin("gpuplan"), "history", "--json", "--db", scene.db],
        env=scene.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert history.returncode == 0, history.stderr
    runs = {r["run_id"]: r for r in json.loads(history.stdout)}
    first, _, again = sorted(runs)
    assert runs[first]["status"] == "killed"
    assert runs[first]["finished_at"] is not None
    assert runs[first]["closed_by_run"] == again == out["run_id"]
    assert [runs[i]["status"] for i in sorted(runs)] == ["killed", "ok", "ok"]
