"""The two databases a ledger can live in, behind one small connection interface.

SQLite (a file, the embedded default) and PostgreSQL (``postgresql://...``, for shards
on several machines sharing one ledger). Everything above this module writes one SQL
dialect: ``?`` placeholders, ``INSERT ... ON CONFLICT``, the schema's ``INTEGER``,
``REAL`` and ``TEXT``. The differences live here and in :mod:`gpuplan.ledger.postgres`
only: placeholder style, how a new row's id comes back, how a transaction begins, how
the schema's column types are spelt, and which driver errors mean "the ledger failed".
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence
from typing import Any, Protocol


class Cursor(Protocol):
    """What a query returns, on either database."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Db(Protocol):
    """One open ledger connection (SQLite or PostgreSQL)."""

    dialect: str
    """``sqlite`` or ``postgresql``."""
    label: str
    """Where the ledger is, safe to print: a file path or a URL without its password."""
    errors: tuple[type[BaseException], ...]
    """Driver errors that callers turn into :class:`~gpuplan.ledger.LedgerError`
    (empty when the driver's errors are already turned into it here)."""

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor: ...

    def insert(self, sql: str, params: Sequence[Any]) -> int:
        """Run one ``INSERT`` into a table with an ``id`` column; the new row's id."""
        ...

    def begin(self) -> None: ...

    def commit(self) -> None: ...

    def rollback(self) -> None:
        """Roll back, never raising: the error that led here is the one to report."""
        ...

    def close(self) -> None: ...

    def ddl(self, sql: str) -> str:
        """A schema statement written for SQLite, in this database's spelling."""
        ...

    def has_table(self, name: str) -> bool:
        """Whether the table exists (asked first: a role without CREATE may not even
        run ``CREATE TABLE IF NOT EXISTS`` on PostgreSQL)."""
        ...

    def try_lock(self, name: str) -> bool:
        """Take the session lock ``name`` without waiting; False when another holds it."""
        ...

    def unlock(self, name: str) -> None: ...

    def lock_held_elsewhere(self, name: str) -> bool:
        """True when another session holds ``name`` right now (its run is alive)."""
        ...


class SqliteDb:
    """A ledger file. Runs on one host take turns through the lock file beside it
    (:func:`gpuplan.usecases.lifecycle.session.run_lock`), so session locks here are no-ops."""

    dialect = "sqlite"
    errors: tuple[type[BaseException], ...] = (sqlite3.Error,)

    def __init__(self, path: str) -> None:
        self.label = path
        self.raw = sqlite3.connect(path, isolation_level=None, timeout=30)
        # A damaged text cell reads with U+FFFD instead of raising UnicodeDecodeError.
        self.raw.text_factory = lambda raw: raw.decode("utf-8", "replace")
        self.raw.execute("PRAGMA foreign_keys = ON")

    @classmethod
    def wrap(cls, raw: sqlite3.Connection, label: str) -> SqliteDb:
        """An already open connection (autocommit mode), as a :class:`Db`."""
        db = cls.__new__(cls)
        db.label, db.raw = label, raw
        return db

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        return self.raw.execute(sql, tuple(params))

    def insert(self, sql: str, params: Sequence[Any]) -> int:
        return int(self.raw.execute(sql, tuple(params)).lastrowid or 0)

    def begin(self) -> None:
        self.raw.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.raw.execute("COMMIT")

    def rollback(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.raw.execute("ROLLBACK")

    def close(self) -> None:
        self.raw.close()

    def ddl(self, sql: str) -> str:
        return sql

    def has_table(self, name: str) -> bool:
        row = self.raw.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
        return row is not None

    def try_lock(self, name: str) -> bool:
        return True

    def unlock(self, name: str) -> None:
        return None

    def lock_held_elsewhere(self, name: str) -> bool:
        return False
