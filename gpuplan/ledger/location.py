"""Where the ledger is: ``--db``, else ``GPUPLAN_DB``, else a file in the user data dir.

A ledger location given by the flag or the variable is one of two things, and anything
else is bad input (:class:`~gpuplan.core.errors.InputError`, exit 2) before any file
or connection is made:

- a URL: ``postgresql://`` or ``postgres://`` (kept as text, checked by the driver's
  side, :mod:`gpuplan.ledger.postgres`), or ``sqlite:///PATH`` (a file, as a path);
- a file path whose directory exists (the file itself is created when missing).

Refused, each with one line that never repeats a value that may hold a password: an
empty value, ``-``, control characters, a libpq keyword string (``host=db
password=...``, which would otherwise become a file named with the password), another
URL scheme, a folder, and a path whose directory does not exist (nothing is created).
The default location's folders are created as needed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from gpuplan.core.errors import InputError
from gpuplan.core.urls import is_postgres_dsn, redact_dsn

DB_ENV = "GPUPLAN_DB"
DB_FILE = "ledger.sqlite3"
SQLITE_URL = "sqlite:///"

_LIBPQ_KEYWORD = re.compile(
    r"\s*(host|hostaddr|port|dbname|user|password|passfile|sslmode|sslpassword|service"
    r"|connect_timeout|options|application_name|target_session_attrs|require_auth)\s*=",
    re.IGNORECASE,
)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]{0,30})://")
_HOW = "give a ledger file path in an existing folder, sqlite:///PATH or postgresql://USER@HOST/DB"


def ledger_location(
    explicit: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> str | Path:
    """The flag, else ``GPUPLAN_DB``, else the default file: a PostgreSQL URL or a path.

    An explicit value (even empty) is checked (:func:`checked_location`); an empty
    ``GPUPLAN_DB`` counts as unset."""
    if explicit is not None:
        return checked_location(os.fspath(explicit), "--db")
    given = (os.environ if environ is None else environ).get(DB_ENV) or None
    if given is not None:
        return checked_location(given, DB_ENV)
    from platformdirs import user_data_dir

    return Path(user_data_dir("gpuplan", appauthor=False)) / DB_FILE


def checked_location(text: str, where: str) -> str | Path:
    """``text`` as a ledger location (a PostgreSQL URL, or a path); InputError naming
    ``where`` (the flag or variable) when it is neither."""
    if not text.strip():
        raise InputError(f"{where}: empty; {_HOW}")
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise InputError(f"{where}: control characters in the ledger location; {_HOW}")
    if is_postgres_dsn(text):
        return text
    if _LIBPQ_KEYWORD.match(text):
        raise InputError(
            f"{where}: a libpq keyword string (host=... dbname=...) is not read (value not "
            "shown); use postgresql://USER@HOST/DB with the password in PGPASSWORD or "
            "PGPASSFILE"
        )
    scheme = _SCHEME.match(text)
    if text.lower().startswith(SQLITE_URL):
        path = text[len(SQLITE_URL) :]
        if not path or "?" in path:
            raise InputError(f"{where}: expected sqlite:///PATH (no query), got {_shown(text)}")
        return _file(Path(path), text, where)
    if scheme is not None or "://" in text:
        name = scheme.group(1) if scheme else "?"
        raise InputError(f"{where}: a {name}:// URL is not a ledger location; {_HOW}")
    if text.strip() == "-":
        raise InputError(f"{where}: '-' (standard input or output) cannot hold a ledger; {_HOW}")
    return _file(Path(text), text, where)


def _file(path: Path, text: str, where: str) -> Path:
    if str(path) == ":memory:":
        return path
    if path.is_dir():
        raise InputError(f"{where}: {_shown(text)} is a folder; name a file in it")
    if not path.parent.is_dir():
        raise InputError(
            f"{where}: {_shown(text)}: its folder does not exist (nothing created); "
            "create it first or choose another path"
        )
    return path


def _shown(text: str) -> str:
    """The value for a message, unless it may hold a password (``user:pw@host``...)."""
    if "@" in text or "=" in text:
        return "(value not shown: it may hold a password)"
    return repr(text[:200])


def ledger_path(
    explicit: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Path:
    """The ledger file: the flag, else ``GPUPLAN_DB``, else the user data directory.

    For callers that need a file; a PostgreSQL URL there is bad input (exit 2)."""
    where = ledger_location(explicit, environ)
    if isinstance(where, str):
        raise InputError(f"{redact_dsn(where)}: a PostgreSQL ledger; this needs a ledger file")
    return where
