"""Every input bounded: the safe reader, private file modes, damaged ledger rows reported
per row, and the CLI's own numbers (``--lock-wait``) and folders (``--catalog-dir``)."""

from __future__ import annotations

import os
import stat
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.errors import DataError
from gpuplan.ledger import Ledger
from gpuplan.loaders.safe_read import read_bytes, read_text
from gpuplan.usecases.lifecycle.session import run_lock

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def test_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(DataError, match="FIFO"):
        read_bytes(fifo, limit=100)
    assert time.monotonic() - started < 2  # no writer: a plain open would block forever


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/dev/urandom"])
def test_devices_are_refused_without_reading(device: str) -> None:
    with pytest.raises(DataError, match="a device"):
        read_bytes(device, limit=100)


def test_size_is_checked_before_reading(tmp_path: Path) -> None:
    sparse = tmp_path / "big.yaml"
    with sparse.open("wb") as handle:
        handle.truncate(10 * 1024**3)  # 10 GiB, sparse: reading it would take minutes
    started = time.monotonic()
    with pytest.raises(DataError, match="too large"):
        read_bytes(sparse, limit=1024**2, what="policy file")
    assert time.monotonic() - started < 2


def test_text_rules(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"a\x00b")
    with pytest.raises(DataError, match="binary"):
        read_text(path, limit=10)
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(DataError, match="not UTF-8"):
        read_text(path, limit=10)
    path.write_bytes(b"\xef\xbb\xbfok")
    assert read_text(path, limit=10) == "ok"
    with pytest.raises(DataError, match="NUL"):
        read_bytes(str(tmp_path / "a\x00b"), limit=10)
    with pytest.raises(DataError, match="directory"):
        read_bytes(tmp_path, limit=10)


def test_ledger_and_lock_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        db = tmp_path / "state" / "deep" / "ledger.sqlite3"
        with Ledger(db):
            pass
        with run_lock(db.with_name(db.name + ".lock"), 0.0):
            pass
    finally:
        os.umask(old)
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    assert stat.S_IMODE(db.with_name("ledger.sqlite3.lock").stat().st_mode) == 0o600
    assert stat.S_IMODE(db.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "state").stat().st_mode) == 0o700


def test_an_existing_wide_ledger_is_narrowed(tmp_path: Path) -> None:
    db = tmp_path / "ledger.sqlite3"
    with Ledger(db):
        pass
    db.chmod(0o644)
    with Ledger(db):
        pass
    assert stat.S_IMODE(db.stat().st_mode) == 0o600


def test_catalog_folders_written_are_private(tmp_path: Path) -> None:
    from gpuplan.core.catalog.offers import Provider
    from gpuplan.loaders.catalog_writer import write_provider_file

    old = os.umask(0o022)
    try:
        target = write_provider_file(tmp_path / "catalog", Provider.AWS, [])
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700


def _damaged_ledger(path: Path) -> None:
    with Ledger(path) as ledger:
        for summary in ({"verdicts": {"idle": 1}}, {}, {}, {}):
            run = ledger.start_run("stop-idle", "p", NOW, dry_run=False)
            ledger.finish_run(run, NOW, "ok", summary)
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE runs SET summary = 'not json{' WHERE id = 1")
        conn.execute("UPDATE runs SET started_at = '2026-13-45' WHERE id = 2")
        conn.execute("""UPDATE runs SET summary = '{"acted": [{"instance_id": 5}]}' WHERE id = 3""")


@pytest.mark.parametrize(
    "argv", [["history"], ["history", "--json"], ["savings"], ["fleet", "--report"]]
)
def test_damaged_ledger_rows_are_reported_per_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    db = tmp_path / "l.db"
    _damaged_ledger(db)
    assert main([*argv, "--db", str(db)]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if argv[0] != "history":
        return  # savings and waste read the typed tables, not the damaged summary blob
    assert "ledger runs row 1 skipped: summary is not JSON" in err
    assert "ledger runs row 2 skipped: started_at is not an ISO time" in err
    assert "ledger runs row 3 skipped: summary.acted[].instance_id is not text" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "1e400", "abc", "86401"])
def test_lock_wait_must_be_finite_and_in_range(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["stop-idle", "--policy", "p.yaml", "--lock-wait", value])
    assert caught.value.code == 2
    assert "--lock-wait" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["catalog"], ["gpus"], ["estimate", "--params", "7B"]])
def test_a_missing_catalog_dir_is_bad_input(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main([*argv, "--catalog-dir", str(tmp_path / "nope")])
    assert caught.value.code == 2
    assert "is not an existing folder" in capsys.readouterr().err


def test_a_missing_catalog_dir_from_the_environment_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUPLAN_CATALOG_DIR", str(tmp_path / "nope"))
    assert main(["catalog"]) == 2
    assert "GPUPLAN_CATALOG_DIR" in capsys.readouterr().err
