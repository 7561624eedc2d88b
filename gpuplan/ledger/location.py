"""Where the ledger is: ``--db``, else ``GPUPLAN_DB``, else a file in the user data dir.

A value starting ``postgresql://`` or ``postgres://`` is a PostgreSQL URL (kept as text);
anything else is a file path.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from gpuplan.core.errors import InputError
from gpuplan.core.urls import is_postgres_dsn, redact_dsn

DB_ENV = "GPUPLAN_DB"
DB_FILE = "ledger.sqlite3"


def ledger_location(
    explicit: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> str | Path:
    """The flag, else ``GPUPLAN_DB``, else the default file: a PostgreSQL URL or a path."""
    given = os.fspath(explicit) if explicit else None
    if not given:
        given = (os.environ if environ is None else environ).get(DB_ENV) or None
    if given and is_postgres_dsn(given):
        return given
    if given:
        return Path(given)
    from platformdirs import user_data_dir

    return Path(user_data_dir("gpuplan", appauthor=False)) / DB_FILE


def ledger_path(
    explicit: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Path:
    """The ledger file: the flag, else ``GPUPLAN_DB``, else the user data directory.

    For callers that need a file; a PostgreSQL URL there is bad input (exit 2)."""
    where = ledger_location(explicit, environ)
    if isinstance(where, str):
        raise InputError(f"{redact_dsn(where)}: a PostgreSQL ledger; this needs a ledger file")
    return where
