"""One killed composite action, settled by two runs at once: each cloud call once.

A run doing snapshot-then-stop (:data:`~tests.ledger.composite_child.SNAPSHOT_THEN_STOP`)
on a fake cloud shared by processes (:mod:`tests.ledger.shared_fake`) is SIGKILLed
right after its intent, or between its steps. Two runs then start together, five
minutes later (the killed run's claim still standing): an unsharded one and a shard of
3 (PostgreSQL: each under its own session lock, in parallel). Settling takes the
instance's claim in the ledger, so exactly one of them resumes the action; the other
reports it as being settled by another run, is not failed, and leaves the instance
alone. The calls of all processes are counted at the fake's journal.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gpuplan.cli.main import main
from gpuplan.ledger import Ledger
from tests.ledger.composite_child import instance
from tests.ledger.settle_child import shared
from tests.ledger.shared_fake import journal, seed

ROOT = Path(__file__).resolve().parents[2]
IID = "i-0composite"
STEPS = "SELECT step, provider_call, state FROM action_steps ORDER BY action_id, step"
ACTING = ("snapshot", "stop")


def rows(db: str, sql: str) -> list[tuple[Any, ...]]:
    with Ledger(db) as ledger:
        return [tuple(r) for r in ledger.select(sql)]


def child(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.ledger.settle_child", *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def setup(tmp_path: Path) -> tuple[Path, Path]:
    """The fleet file (one idle instance) and the shared cloud's folder, seeded."""
    fleet = tmp_path / "fleet.json"
    body = {"instances": [instance(IID)], "utilisation_percent": {IID: 1.0}}
    fleet.write_text(json.dumps(body), encoding="utf-8")
    folder = tmp_path / "cloud"
    folder.mkdir()
    seed(folder / "state.json", list(shared(fleet, folder).instances.values()))
    return fleet, folder


def kill_at(block_at: str, db: str, fleet: Path, folder: Path) -> None:
    killed = child("kill", db, str(fleet), str(folder), block_at)
    deadline = time.monotonic() + 60
    while not (folder / "hanging").exists():
        assert killed.poll() is None, killed.communicate()[1]
        assert time.monotonic() < deadline, f"the run never reached {block_at}"
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.communicate(timeout=30)


def settle_together(db: str, fleet: Path, folder: Path) -> list[dict[str, Any]]:
    """An unsharded run and a shard of 3, started together; their results."""
    runs = [child("settle", db, str(fleet), str(folder), str(n), f"r{n}") for n in (0, 3)]
    deadline = time.monotonic() + 60
    while not all((folder / f"ready-r{n}").exists() for n in (0, 3)):
        assert all(r.poll() is None for r in runs), [r.communicate()[1] for r in runs]
        assert time.monotonic() < deadline, "the settling runs never got ready"
        time.sleep(0.02)
    (folder / "go").write_text("go", encoding="utf-8")
    out = []
    for r in runs:
        stdout, stderr = r.communicate(timeout=120)
        assert r.returncode == 0, stderr
        out.append(json.loads(stdout))
    return out


def one_settles(results: list[dict[str, Any]], outcome: str) -> None:
    """Exactly one run settled the intent as ``outcome``; the other left it to that run,
    not as a failure, and left the instance alone (or, started after the settling ended,
    found nothing left to settle and did not act)."""
    settled = [r for r in results if [x["outcome"] for x in r["reconciled"]] == [outcome]]
    left = [r for r in results if r not in settled]
    assert len(settled) == 1 and len(left) == 1, results
    [other] = left
    assert not other["failed"] and other["problems"] == [], other
    if not other["reconciled"]:
        # Under load one run may start after the other has settled and released the
        # claim: nothing is left to settle then, and it must not act on the instance.
        assert all(o["outcome"] != outcome for o in other["outcomes"]), results
        return
    [said] = other["reconciled"]
    assert said["outcome"] == "skipped", results
    assert said["detail"].startswith("being settled by another gpuplan run ("), said
    assert [(o["outcome"], o["detail"]) for o in other["outcomes"]] == [("skipped", said["detail"])]
    assert not settled[0]["failed"], settled


@pytest.mark.parametrize("block_at", ["intent", "stop"])
def test_two_runs_settling_one_killed_action_make_each_call_once(
    block_at: str, location: str, tmp_path: Path
) -> None:
    fleet, folder = setup(tmp_path)
    kill_at(block_at, location, fleet, folder)
    before = len(journal(folder / "calls.log"))
    if block_at == "intent":
        assert rows(location, STEPS) == [(1, "snapshot", "planned"), (2, "stop", "planned")]
    else:
        assert rows(location, STEPS) == [(1, "snapshot", "done"), (2, "stop", "pending")]

    results = settle_together(location, fleet, folder)

    calls = [c for c in journal(folder / "calls.log")[before:] if c.split()[0] in ACTING]
    resumed = ["snapshot", "stop"] if block_at == "intent" else ["stop"]
    assert calls == [f"{c} {IID}" for c in resumed]
    one_settles(results, "stopped")
    assert rows(location, STEPS) == [(1, "snapshot", "done"), (2, "stop", "done")]
    assert rows(location, "SELECT COUNT(*) FROM actions WHERE outcome = 'pending'") == [(0,)]


def test_a_snapshot_made_by_a_call_cut_short_is_found_recorded_and_shown(
    location: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Killed inside the snapshot call after the cloud made it: its id never came back.
    The run settling it finds the snapshot by the label recorded before the call and
    records its id; the other run leaves it alone; the action is then done afresh once."""
    fleet, folder = setup(tmp_path)
    kill_at("snapshot-taken", location, fleet, folder)
    before = len(journal(folder / "calls.log"))
    assert rows(location, STEPS) == [(1, "snapshot", "pending"), (2, "stop", "planned")]
    assert rows(location, "SELECT made FROM action_steps WHERE step = 1") == [("",)]

    results = settle_together(location, fleet, folder)

    first = f"snap-{IID}-1"  # the killed call's snapshot
    calls = [c for c in journal(folder / "calls.log")[before:] if c.split()[0] in ACTING]
    assert calls == [f"snapshot {IID}", f"stop {IID}"]  # the action afresh, once
    one_settles(results, "failed")
    [settled] = [r for r in results if r["reconciled"][0]["outcome"] == "failed"]
    detail = settled["reconciled"][0]["detail"]
    assert "not resumed: its snapshot step was cut short (killed mid-call)" in detail
    assert detail.endswith(f"; snapshot {first}"), detail
    assert [(o["outcome"]) for o in settled["outcomes"]] == ["stopped"]
    assert rows(location, "SELECT state, made FROM action_steps ORDER BY id") == [
        ("interrupted", first),
        ("not done", ""),
        ("done", f"snap-{IID}-2"),
        ("done", ""),
    ]
    assert main(["history", "--json", "--db", location]) == 0
    made = {r["run_id"]: r["made"] for r in json.loads(capsys.readouterr().out)}
    assert made[1] == [{"instance_id": IID, "step": "snapshot", "id": first}]
    assert sorted(i["id"] for m in made.values() for i in m) == [first, f"snap-{IID}-2"]
