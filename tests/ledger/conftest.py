"""Fixtures: one real PostgreSQL server per test session, a fresh database per test,
and ``location``, a ledger on each backend (SQLite file, PostgreSQL URL)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.moto_fixtures import aws_env  # noqa: F401 - the shard kill scenario
from tests.fakes.moto_server import _moto_server_process, server  # noqa: F401
from tests.ledger.pgserver import PASSWORD, ROLE, PgServer, ServerMissing, pg_server

_names = itertools.count(1)


@pytest.fixture(scope="session")
def pg() -> Iterator[PgServer]:
    try:
        with pg_server() as server:
            yield server
    except ServerMissing as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def pg_db(pg: PgServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A new, empty database owned by the unprivileged role; its name. The password
    reaches libpq through PGPASSWORD, as the docs recommend, not through the URL."""
    name = f"ledger_{next(_names)}"
    pg.admin(f"CREATE DATABASE {name} OWNER {ROLE}")
    monkeypatch.setenv("PGPASSWORD", PASSWORD)
    yield name
    pg.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a ledger lives: a file path, or a PostgreSQL URL without a password."""
    if request.param == "sqlite":
        return str(tmp_path / "ledger.sqlite3")
    pg: PgServer = request.getfixturevalue("pg")
    return pg.dsn(request.getfixturevalue("pg_db"))
