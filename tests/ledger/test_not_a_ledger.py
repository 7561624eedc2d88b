"""A ledger file that exists but is not a ledger: one line, exit 1, nothing done.

An empty file (a ledger truncated to 0 bytes), random bytes, or a SQLite database
without gpuplan's tables is refused by ``stop-idle`` and ``history`` through ``main()``:
one line naming the file and what is wrong, exit 1, the file unchanged, no run
recorded and nothing acted on; never a silent fresh start. A path that does not exist
still gets a new ledger, made whole before it appears.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.ledger import Ledger

DOCS = Path(__file__).resolve().parents[2] / "docs" / "examples"


def _empty(path: Path) -> str:
    path.write_bytes(b"")
    return "the ledger file is empty (0 bytes)"


def _random(path: Path) -> str:
    path.write_bytes(bytes(range(256)) * 8 + os.urandom(512))
    return "not a SQLite database"


def _foreign(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE recipes (name TEXT)")
    conn.close()
    return "a SQLite database without gpuplan's tables (its tables: recipes)"


POLICY = """\
version: 1
name: ledger-check
scope:
  aws: {regions: [us-east-1]}
  match_labels: {team: research}
idle:
  window_minutes: 30
  grace_minutes: 0
  allow_data_loss: true
"""


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A policy over the demo fleet (the in-memory fake), with no webhook."""
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(DOCS / "demo-fleet.json"))
    monkeypatch.delenv("GPUPLAN_WEBHOOK_URL", raising=False)
    path = tmp_path / "policy" / "policy.yaml"
    path.parent.mkdir()
    path.write_text(POLICY, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("spoil", [_empty, _random, _foreign])
@pytest.mark.parametrize("command", ["stop-idle", "history"])
def test_a_file_that_is_not_a_ledger_is_one_line_and_exit_1(
    spoil: Callable[[Path], str],
    command: str,
    demo: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "ledger.sqlite3"
    wrong = spoil(path)
    path.chmod(0o644)  # not a ledger: not ours to narrow either
    before = path.read_bytes()
    args = ["stop-idle", "--policy", demo, "--apply"] if command == "stop-idle" else ["history"]

    assert main([*args, "--json", "--db", str(path)]) == 1

    out, err = capsys.readouterr()
    assert out == ""  # no plan, no run: nothing was surveyed, decided or acted on
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert str(path) in err and wrong in err, err
    assert path.read_bytes() == before  # no table written into it, no fresh start
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) in (
        ["ledger.sqlite3", "policy"],
        ["ledger.sqlite3", "ledger.sqlite3.lock", "policy"],  # stop-idle's run lock
    )


def test_a_missing_ledger_is_created_whole(
    demo: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "new").mkdir()
    path = tmp_path / "new" / "ledger.sqlite3"
    assert main(["stop-idle", "--policy", demo, "--json", "--db", str(path)]) == 0
    capsys.readouterr()
    assert main(["history", "--json", "--db", str(path)]) == 0
    [run] = json.loads(capsys.readouterr().out)
    assert run["dry_run"] is True and run["status"] == "ok"
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "ledger.sqlite3",
        "ledger.sqlite3.lock",
    ]  # no temporary file left beside it
    with Ledger(path) as ledger:
        assert ledger.count("runs") == 1
