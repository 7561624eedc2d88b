"""A composite action (snapshot, then stop) killed part way, on SQLite and PostgreSQL.

The child (:mod:`tests.ledger.composite_child`) runs an applied ``stop-idle`` whose
AWS stop is two steps on the in-memory fake, and hangs inside one call until the test
SIGKILLs it. The ledger then holds the action's ``pending`` intent and one row per
step saying how far it got. The next run's reconcile resumes the remaining step when
that is safe (the instance still running and idle, no step cut short) and otherwise
reports the action half done; it never leaves the intent pending.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from gpuplan.ledger import Ledger
from gpuplan.ledger.killed import KILLED
from tests.ledger.composite_child import LATER, fake, instance, run

ROOT = Path(__file__).resolve().parents[2]
IID = "i-0composite"
STEPS = "SELECT step, provider_call, state FROM action_steps ORDER BY action_id, step"
ACTIONS = "SELECT instance_id, action, outcome FROM actions ORDER BY id"


def rows(db: str, sql: str) -> list[tuple[Any, ...]]:
    with Ledger(db) as ledger:
        return [tuple(r) for r in ledger.select(sql)]


def fleet_file(tmp_path: Path, percent: float) -> Path:
    path = tmp_path / "fleet.json"
    body = {"instances": [instance(IID)], "utilisation_percent": {IID: percent}}
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def kill_in(call: str, db: str, tmp_path: Path) -> None:
    """Run the child until it hangs in ``call``, then SIGKILL it."""
    marker = tmp_path / "hanging"
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.ledger.composite_child", db,
         str(fleet_file(tmp_path, 1.0)), call, str(marker)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert child.poll() is None, child.communicate()[1]
        assert time.monotonic() < deadline, f"the child never called {call}"
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)


def test_killed_between_snapshot_and_stop_the_next_run_resumes_the_stop(
    location: str, tmp_path: Path
) -> None:
    kill_in("stop", location, tmp_path)
    assert rows(location, ACTIONS) == [(IID, "stop", "pending")]
    assert rows(location, STEPS) == [(1, "snapshot", "done"), (2, "stop", "pending")]

    provider = fake(fleet_file(tmp_path, 1.0))  # still running, still idle
    result = run(location, provider, LATER)

    [r] = result.reconciled
    assert (r.instance_id, r.outcome.value) == (IID, "stopped")
    assert r.detail.startswith("resumed after a killed run (snapshot done, stop pending)")
    assert provider.calls_to("snapshot") == []  # step 1 is not done twice
    assert [c.args[0] for c in provider.calls_to("stop")] == [IID]
    assert provider.instances[IID].state.value == "stopped"
    assert "gpuplan-stopped-at" in provider.instances[IID].labels
    assert rows(location, STEPS) == [(1, "snapshot", "done"), (2, "stop", "done")]
    # The resumed action is settled in place; this run's own plan finds it stopped.
    assert rows(location, ACTIONS) == [(IID, "stop", "stopped"), (IID, "stop", "skipped")]
    assert rows(location, "SELECT status FROM runs ORDER BY id") == [(KILLED,), ("ok",)]


def test_a_half_done_action_on_an_instance_busy_again_is_reported_not_resumed(
    location: str, tmp_path: Path
) -> None:
    kill_in("stop", location, tmp_path)
    provider = fake(fleet_file(tmp_path, 90.0))  # busy again since the kill
    result = run(location, provider, LATER)

    [r] = result.reconciled
    assert r.outcome.value == "failed"
    assert r.detail == (
        "half done when its run was killed (snapshot done, stop pending); "
        "not resumed: the instance is no longer idle; snapshot snap-i-0composite-1"
    )  # the snapshot the killed run took, by its id
    assert provider.calls_to("stop") == [] and provider.instances[IID].state.value == "running"
    assert rows(location, ACTIONS) == [(IID, "stop", "failed")]
    assert rows(location, STEPS) == [(1, "snapshot", "done"), (2, "stop", "interrupted")]
    assert rows(location, "SELECT status FROM runs ORDER BY id") == [(KILLED,), ("ok",)]


def test_a_snapshot_cut_short_is_reported_and_the_action_is_done_afresh(
    location: str, tmp_path: Path
) -> None:
    kill_in("snapshot", location, tmp_path)
    assert rows(location, STEPS) == [(1, "snapshot", "pending"), (2, "stop", "planned")]

    provider = fake(fleet_file(tmp_path, 1.0))
    result = run(location, provider, LATER)

    [r] = result.reconciled
    assert r.outcome.value == "failed"
    assert r.detail.endswith("not resumed: its snapshot step was cut short (killed mid-call)")
    # Still idle and the killed run's claim expired: this run does the whole action anew.
    assert [c.method for c in provider.calls if c.method in ("snapshot", "stop")] == [
        "snapshot",
        "stop",
    ]
    assert rows(location, ACTIONS) == [(IID, "stop", "failed"), (IID, "stop", "stopped")]
    assert rows(location, STEPS) == [
        (1, "snapshot", "interrupted"),  # it may have made a partial snapshot
        (2, "stop", "not done"),
        (1, "snapshot", "done"),
        (2, "stop", "done"),
    ]
    # The cut-short call made nothing (looked up by its label); the fresh one is recorded.
    made = "SELECT made FROM action_steps ORDER BY id"
    assert rows(location, made) == [("",), ("",), (f"snap-{IID}-1",), ("",)]
