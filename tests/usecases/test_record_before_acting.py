"""Record before acting (issue 14, item 2): intents, kills, signals, ledger failures.

The subprocess tests run the installed ``gpuplan stop-idle --apply`` against
``moto_server`` through a proxy that holds the first StopInstances answer, so the test
can SIGKILL or SIGTERM the child, or break its ledger, while the cloud call is in
flight (moto has already stopped the instance).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gpuplan.core.catalog.query import Catalog
from gpuplan.core.lifecycle.idle import STOPPED_AT_TAG
from gpuplan.ledger import Ledger, LedgerError
from gpuplan.usecases.lifecycle.stop_idle import run_stop_idle
from tests.fakes.aws_helpers import policy, providers
from tests.fakes.aws_world import NOW, World, flat
from tests.fakes.moto_server import POLICY, idle_periods, installed_bin, world_on
from tests.usecases.holding_proxy import Hold, holding_proxy

TEAM = {"team": "research"}


@dataclass
class Scene:
    world: World
    env: dict[str, str]
    cmd: list[str]
    db: Path
    instances: list[str]
    hold: Hold


@pytest.fixture
def scene(
    server: str,
    tmp_path: Path,
    lc_catalog_dir: Path,
    aws_env: None,
) -> Iterator[Scene]:
    world = world_on(server)
    now = datetime.now(UTC)
    periods = idle_periods(now)
    ids = [world.launch(tags=TEAM, launched=now) for _ in range(2)]
    for iid in ids:
        world.publish(iid, flat(1.0), periods=periods)
    policy_file = tmp_path / "policy.yaml"
    policy_file.write_text(POLICY, encoding="utf-8")
    hold = Hold("StopInstances")
    with holding_proxy(server, hold) as proxy:
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path),
            "AWS_ENDPOINT_URL": proxy,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "GPUPLAN_DB": str(tmp_path / "ledger.sqlite3"),
        }
        cmd = [installed_bin("gpuplan"), "stop-idle", "--policy", str(policy_file)]
        cmd += ["--apply", "--json"]
        cmd += ["--catalog-dir", str(lc_catalog_dir)]
        yield Scene(world, env, cmd, tmp_path / "ledger.sqlite3", ids, hold)


def start(scene: Scene) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        scene.cmd, env=scene.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert scene.hold.seen.wait(60), "the child never called StopInstances"
    return child


def pending(db: Path) -> list[str]:
    with Ledger(db) as ledger:
        return [p.instance_id for p in ledger.pending_actions()]


def test_sigkill_mid_call_leaves_an_intent_that_the_next_run_reconciles(scene: Scene) -> None:
    child = start(scene)
    child.kill()
    child.communicate(timeout=30)
    scene.hold.release.set()
    (killed,) = pending(scene.db)
    assert scene.world.state(killed) == "stopped"  # the cloud acted, nothing settled
    assert STOPPED_AT_TAG not in scene.world.tags(killed)
    (other,) = [i for i in scene.instances if i != killed]
    assert scene.world.state(other) == "running"

    again = subprocess.run(scene.cmd, env=scene.env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    out = json.loads(again.stdout)
    assert [(r["instance_id"], r["outcome"]) for r in out["reconciled"]] == [(killed, "stopped")]
    assert STOPPED_AT_TAG in scene.world.tags(killed)  # tagged as a normal stop would be
    assert pending(scene.db) == []
    with Ledger(scene.db) as ledger:
        acted = ledger.runs(limit=1)[0].summary["acted"]
    assert {a["instance_id"] for a in acted} == {killed, other}  # savings see both


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_sigterm_finishes_the_call_in_flight_records_it_and_leaves_the_rest(
    scene: Scene, sig: signal.Signals
) -> None:
    child = start(scene)
    child.send_signal(sig)
    scene.hold.release.set()
    out, err = child.communicate(timeout=60)
    assert child.returncode == 128 + sig, err
    assert f"stopped by signal {int(sig)}" in err and "Traceback" not in err
    got = {d["instance_id"]: d for d in json.loads(out)["decisions"]}
    done = [i for i, d in got.items() if d["action"] == "stopped"]
    left = [i for i, d in got.items() if d["action"] == "skipped"]
    assert len(done) == 1 and len(left) == 1
    assert "interrupted" in got[left[0]]["detail"]
    assert scene.world.state(done[0]) == "stopped" and STOPPED_AT_TAG in scene.world.tags(done[0])
    assert scene.world.state(left[0]) == "running"
    assert pending(scene.db) == []


def test_a_ledger_broken_mid_call_is_one_line_and_the_intent_survives(scene: Scene) -> None:
    child = start(scene)
    with open(scene.db, "r+b") as handle:  # a damaged header: every later write fails
        handle.write(b"\0" * 100)
    scene.hold.release.set()
    _out, err = child.communicate(timeout=60)
    assert child.returncode == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "ledger" in lines[0] and "Traceback" not in err
    assert sum(scene.world.state(i) == "stopped" for i in scene.instances) == 1  # no more


def test_a_ledger_that_cannot_be_opened_acts_on_nothing(scene: Scene, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("", encoding="utf-8")
    env = {**scene.env, "GPUPLAN_DB": str(tmp_path / "file" / "ledger.sqlite3")}
    done = subprocess.run(scene.cmd, env=env, capture_output=True, text=True, timeout=120)
    # Its folder is a file: bad input (issue 28), refused before anything is surveyed.
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert all(scene.world.state(i) == "running" for i in scene.instances)
    assert scene.hold.count == 0


def test_the_intent_is_committed_before_the_cloud_is_called(
    world: World, lc_catalog: Catalog, tmp_path: Path
) -> None:
    iid = world.launch(tags=TEAM)
    world.publish(iid, flat(0.5))
    seen: list[list[str]] = []

    def check(**_: Any) -> None:
        seen.append(pending(tmp_path / "l.db"))  # a second connection sees it committed

    world.client("ec2", "us-east-1").meta.events.register("before-send.ec2.StopInstances", check)
    with Ledger(tmp_path / "l.db") as ledger:
        run_stop_idle(
            policy(), providers(world, lc_catalog, ["us-east-1"]), apply=True, now=NOW,
            ledger=ledger,
        )  # fmt: skip
    assert seen == [[iid]]
    assert pending(tmp_path / "l.db") == []


def test_a_failing_rollback_does_not_hide_the_first_error(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "l.db")
    with (
        pytest.raises(LedgerError, match="first failure") as caught,
        ledger.transaction() as conn,
    ):
        conn.execute("COMMIT")  # ROLLBACK will now fail: no transaction is active
        raise sqlite3.OperationalError("first failure")
    assert "\n" not in caught.value.message
