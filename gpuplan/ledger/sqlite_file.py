"""A ledger file: made whole before it appears, and refused when it is not a ledger.

A ledger file that does not exist is created complete: built and migrated under a
temporary name beside it, then linked into place (if another process created it
meanwhile, theirs is kept). So a file at the ledger's path is never half made by
gpuplan, and one that exists but is empty (0 bytes: truncated), is not a SQLite
database, or is a SQLite database without gpuplan's tables is an error naming the file
and what is wrong (:class:`LedgerError`, exit 1), never a silent fresh start over a
lost history and never gpuplan's tables written into someone else's database. The
check comes before the file's mode is narrowed, so a refused file is left exactly as
it was.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
import stat
from pathlib import Path

from gpuplan.ledger.backend import SqliteDb
from gpuplan.ledger.files import private_file
from gpuplan.ledger.migrations import LedgerError, migrate

SQLITE_HEADER = b"SQLite format 3\x00"
LEDGER_TABLE = "schema_migrations"
"""The table every gpuplan ledger has from its first migration on."""


def create_ledger_file(path: Path) -> None:
    """Create a new, migrated ledger at ``path`` (which did not exist) in one step."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.new")
    try:
        private_file(temp)
        db = SqliteDb(str(temp))
        try:
            migrate(db, str(path))
        finally:
            db.close()
        try:
            os.link(temp, path)
        except FileExistsError:
            pass  # another process made it first: theirs is the ledger
        except OSError:  # no hard links on this file system (some network or FUSE mounts)
            if not path.exists():
                os.replace(temp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)


def check_ledger_file(path: Path) -> None:
    """Refuse an existing file that is not a gpuplan ledger (empty, not SQLite, or
    SQLite without gpuplan's tables): one line saying why. Asked
    before its mode is narrowed, so a file that is refused is left exactly as it was;
    a FIFO or device is not read here (``private_file`` refuses it)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        head = os.read(fd, len(SQLITE_HEADER))
    finally:
        os.close(fd)
    if not head:
        raise LedgerError(
            f"{path}: the ledger file is empty (0 bytes), so its history is lost; nothing "
            "was done. Restore it from a backup, or remove it to start a new ledger"
        )
    if head != SQLITE_HEADER:
        raise LedgerError(
            f"{path}: cannot use as the gpuplan ledger: not a SQLite database; nothing was done"
        )
    _check_tables(path)


def _check_tables(path: Path) -> None:
    """Refuse a SQLite database that gpuplan did not make (no ``schema_migrations``);
    read only (a connection that writes nothing, closed before the file is narrowed)."""
    raw = sqlite3.connect(str(path), isolation_level=None, timeout=30)
    try:
        db = SqliteDb.wrap(raw, str(path))
        if db.has_table(LEDGER_TABLE):
            return
        names = [str(r[0]) for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name LIMIT 4"
        ).fetchall()]  # fmt: skip
    except sqlite3.DatabaseError as exc:
        raise LedgerError(f"{path}: cannot use as the gpuplan ledger: {exc}") from None
    finally:
        raw.close()
    has = f"its tables: {', '.join(names[:3])}{', ...' if len(names) > 3 else ''}"
    raise LedgerError(
        f"{path}: cannot use as the gpuplan ledger: a SQLite database without gpuplan's "
        f"tables ({has if names else 'it has no tables'}); nothing was done"
    )
