"""The ledger's connection: opening and migrating it, transactions, locks, raw reads.

:class:`LedgerHandle` holds one database connection (a SQLite file or PostgreSQL,
:mod:`gpuplan.ledger.backend`), migrated to the current schema when opened. Every
write goes through :meth:`LedgerHandle.transaction`; any database failure leaves as
one :class:`LedgerError` line naming the ledger (a URL without its password), and a
failing ROLLBACK never hides the error that caused it. The records gpuplan writes and
reads live on :class:`gpuplan.ledger.store.Ledger`, which builds on this.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from gpuplan.core.urls import is_postgres_dsn
from gpuplan.ledger import rows as rows_mod
from gpuplan.ledger.backend import Db, SqliteDb
from gpuplan.ledger.files import private_file
from gpuplan.ledger.location import ledger_location
from gpuplan.ledger.migrations import LedgerError, migrate
from gpuplan.ledger.sqlite_file import check_ledger_file, create_ledger_file


class LedgerHandle:
    """One open ledger (file or PostgreSQL), migrated to the current schema."""

    def __init__(
        self, path: str | os.PathLike[str], *, environ: Mapping[str, str] | None = None
    ) -> None:
        self._depth = 0
        """How deep in nested ``transaction()`` blocks we are (0: none open)."""
        self.damaged: list[rows_mod.DamagedRow] = []
        """Rows that reading skipped because they could not be decoded (for notices)."""
        self.shard = ""
        """The shard (``INDEX/COUNT``) of the session using this handle, kept per run."""
        self.lock_name = ""
        """The run lock the session holds through this handle, kept per run."""
        self.path: Path | None = None
        where = os.fspath(path)
        if is_postgres_dsn(where):
            from gpuplan.ledger.postgres import PostgresDb

            self._conn: Db = PostgresDb(where, environ)
            self.label = self._conn.label
            try:
                migrate(self._conn, self.label)
            except BaseException:
                self._conn.close()
                raise
            return
        self.path = Path(path)
        self.label = where
        try:
            if where != ":memory:":
                target = self.path.resolve() if self.path.is_symlink() else self.path
                if not target.exists():
                    create_ledger_file(target)  # whole, or not at all
                check_ledger_file(self.path)  # before narrowing: a refused file is untouched
                private_file(self.path)
            self._conn = SqliteDb(where)
            migrate(self._conn, where)
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            raise LedgerError(f"{path}: cannot use as the gpuplan ledger: {exc}") from None
        except OSError as exc:
            raise LedgerError(f"{path}: cannot create the ledger: {exc.strerror}") from None

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._conn.dialect

    @classmethod
    def open(
        cls,
        explicit: str | os.PathLike[str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Self:
        """The ledger named by ``--db``, ``GPUPLAN_DB`` or the default location."""
        return cls(ledger_location(explicit, environ), environ=environ)

    def close(self) -> None:
        self._conn.close()

    def try_lock(self, name: str) -> bool:
        """Take the session lock ``name`` (PostgreSQL advisory lock) without waiting;
        False when another session holds it. Always True for a ledger file, whose runs
        take turns through the lock file beside it."""
        return self._conn.try_lock(name)

    def unlock(self, name: str) -> None:
        self._conn.unlock(name)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[Db]:
        """One write transaction: all of it lands, or none of it does.

        Nested use joins the outer transaction, so a whole run (run, decisions, actions)
        can be written atomically from the same record methods.
        """
        depth = self._depth
        if depth:
            self._depth = depth + 1
            try:
                yield self._conn
            finally:
                self._depth = depth
            return
        try:
            self._conn.begin()
        except self._conn.errors as exc:
            raise self._failed(exc) from None
        self._depth = 1
        try:
            yield self._conn
            self._conn.commit()
        except BaseException as exc:
            self._conn.rollback()  # never raises: the first error is the one to report
            if isinstance(exc, self._conn.errors):
                raise self._failed(exc) from None
            raise
        finally:
            self._depth = 0

    def _failed(self, exc: BaseException) -> LedgerError:
        return LedgerError(f"{self.label}: ledger write failed: {exc}")

    def lock_held_elsewhere(self, name: str) -> bool:
        """True when another session holds the run lock ``name`` (its run is alive);
        always False for a ledger file, whose runs take turns through the lock file."""
        return self._conn.lock_held_elsewhere(name)

    def select(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Rows of one read-only query (for :mod:`gpuplan.ledger.queries`)."""
        try:
            return list(self._conn.execute(sql, params).fetchall())
        except self._conn.errors as exc:
            raise LedgerError(f"{self.label}: ledger read failed: {exc}") from None

    def count(self, table: str) -> int:
        """Rows in one of the ledger's tables (for reports and tests)."""
        if table not in {
            "runs",
            "decisions",
            "actions",
            "action_steps",
            "spend_snapshots",
            "alerts_sent",
            "instance_claims",
            "bill_lines",
            "bill_estimates",
        }:
            raise ValueError(f"not a ledger table: {table}")
        return int(self._conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
