"""The ledger's schema, as numbered migrations applied in order, each in a transaction.

Never edit a released migration: add the next number. ``schema_migrations`` records
what a database has, so an old file upgrades in place and a file written by a newer
gpuplan is refused instead of being misread.

One set of migrations serves SQLite and PostgreSQL: they are written in SQLite's
spelling and each database connection renders its own (:meth:`Db.ddl
<gpuplan.ledger.backend.Db.ddl>`: on PostgreSQL ``INTEGER PRIMARY KEY`` becomes an
identity column, ``REAL`` a double, ``TEXT`` byte-ordered text). Two processes opening
a fresh database at once (shards starting together) take turns: PostgreSQL through an
advisory lock, SQLite through ``BEGIN IMMEDIATE``; each re-reads the version inside.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from gpuplan.core.errors import GpuplanError

if TYPE_CHECKING:
    from gpuplan.ledger.backend import Db


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "runs, decisions and actions",
        """
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            policy TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            dry_run INTEGER NOT NULL DEFAULT 1,
            status TEXT NOT NULL DEFAULT 'running',
            summary TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX runs_policy_started ON runs (policy, started_at);
        CREATE TABLE decisions (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs (id),
            provider TEXT NOT NULL,
            account TEXT NOT NULL DEFAULT '',
            region TEXT NOT NULL,
            zone TEXT,
            instance_id TEXT NOT NULL,
            instance_type TEXT NOT NULL,
            state TEXT NOT NULL,
            verdict TEXT NOT NULL,
            reason TEXT NOT NULL,
            planned_action TEXT NOT NULL,
            hourly_usd TEXT,
            labels TEXT NOT NULL DEFAULT '{}',
            decided_at TEXT NOT NULL
        );
        CREATE INDEX decisions_run ON decisions (run_id);
        CREATE INDEX decisions_instance ON decisions (instance_id, decided_at);
        CREATE TABLE actions (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs (id),
            decision_id INTEGER REFERENCES decisions (id),
            provider TEXT NOT NULL,
            region TEXT NOT NULL,
            instance_id TEXT NOT NULL,
            action TEXT NOT NULL,
            outcome TEXT NOT NULL,
            detail TEXT NOT NULL DEFAULT '',
            acted_at TEXT NOT NULL
        );
        CREATE INDEX actions_run ON actions (run_id);
        """,
    ),
    Migration(
        2,
        "spend snapshots and alerts sent",
        """
        CREATE TABLE spend_snapshots (
            id INTEGER PRIMARY KEY,
            run_id INTEGER REFERENCES runs (id),
            policy TEXT NOT NULL,
            month TEXT NOT NULL,
            recorded_at TEXT NOT NULL,
            month_to_date_usd TEXT NOT NULL,
            forecast_usd TEXT NOT NULL,
            monthly_usd TEXT,
            instances INTEGER NOT NULL,
            detail TEXT NOT NULL DEFAULT '{}'
        );
        CREATE INDEX spend_policy_month ON spend_snapshots (policy, month, recorded_at);
        CREATE TABLE alerts_sent (
            policy TEXT NOT NULL,
            month TEXT NOT NULL,
            threshold_percent REAL NOT NULL,
            sent_at TEXT NOT NULL,
            channel TEXT NOT NULL,
            PRIMARY KEY (policy, month, threshold_percent)
        );
        """,
    ),
    Migration(
        3,
        "what savings and waste read from the tables: GPUs per decision, window per run",
        """
        ALTER TABLE decisions ADD COLUMN gpu_count REAL NOT NULL DEFAULT 0;
        ALTER TABLE runs ADD COLUMN window_minutes INTEGER NOT NULL DEFAULT 60;
        CREATE INDEX actions_outcome ON actions (outcome);
        """,
    ),
    Migration(
        4,
        "audit alerts sent",
        """
        CREATE TABLE audit_alerts_sent (
            policy TEXT NOT NULL,
            instance_id TEXT NOT NULL,
            period TEXT NOT NULL,
            sent_at TEXT NOT NULL,
            busy_percent REAL NOT NULL,
            paid_usd TEXT NOT NULL,
            PRIMARY KEY (policy, instance_id, period)
        );
        """,
    ),
    Migration(
        5,
        "shards: the shard and run lock of each run, and per-instance claims",
        """
        ALTER TABLE runs ADD COLUMN shard TEXT NOT NULL DEFAULT '';
        ALTER TABLE runs ADD COLUMN lock_name TEXT NOT NULL DEFAULT '';
        CREATE TABLE instance_claims (
            provider TEXT NOT NULL,
            account TEXT NOT NULL,
            region TEXT NOT NULL,
            instance_id TEXT NOT NULL,
            run_id INTEGER NOT NULL REFERENCES runs (id),
            claimed_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            PRIMARY KEY (provider, account, region, instance_id)
        );
        """,
    ),
    Migration(
        6,
        "the scope each action was taken in, so reconcile settles only its own run's intents",
        """
        ALTER TABLE actions ADD COLUMN scope TEXT NOT NULL DEFAULT '';
        """,
    ),
    Migration(
        7,
        "audit alerts are claimed before they are sent: the claim's state, holder and expiry",
        """
        ALTER TABLE audit_alerts_sent ADD COLUMN state TEXT NOT NULL DEFAULT 'sent';
        ALTER TABLE audit_alerts_sent ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';
        ALTER TABLE audit_alerts_sent ADD COLUMN expires_at TEXT NOT NULL DEFAULT '';
        """,
    ),
    Migration(
        8,
        "the steps of a composite action, each recorded before its call and settled after",
        """
        CREATE TABLE action_steps (
            id INTEGER PRIMARY KEY,
            action_id INTEGER NOT NULL REFERENCES actions (id),
            step INTEGER NOT NULL,
            provider_call TEXT NOT NULL,
            state TEXT NOT NULL,
            detail TEXT NOT NULL DEFAULT '',
            updated_at TEXT NOT NULL
        );
        CREATE UNIQUE INDEX action_steps_action ON action_steps (action_id, step);
        """,
    ),
    Migration(
        9,
        "each step's label (written before its call, carried by what it makes) and the ids"
        " it made, so a call cut short by a kill is found by its label and recorded",
        """
        ALTER TABLE action_steps ADD COLUMN label TEXT NOT NULL DEFAULT '';
        ALTER TABLE action_steps ADD COLUMN made TEXT NOT NULL DEFAULT '';
        """,
    ),
    Migration(
        10,
        "actual spend: each cloud's daily cost lines, and gpuplan's estimate for the same"
        " provider, scope and day beside them; budget alerts are claimed before they are"
        " sent (the claim's state, holder and expiry), as audit alerts are",
        """
        ALTER TABLE alerts_sent ADD COLUMN state TEXT NOT NULL DEFAULT 'sent';
        ALTER TABLE alerts_sent ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';
        ALTER TABLE alerts_sent ADD COLUMN expires_at TEXT NOT NULL DEFAULT '';
        CREATE TABLE bill_lines (
            policy TEXT NOT NULL,
            provider TEXT NOT NULL,
            source TEXT NOT NULL,
            scope TEXT NOT NULL,
            day TEXT NOT NULL,
            kind TEXT NOT NULL,
            instance_type TEXT NOT NULL,
            team TEXT NOT NULL,
            item TEXT NOT NULL,
            usd TEXT NOT NULL,
            hours TEXT,
            final INTEGER NOT NULL DEFAULT 1,
            fetched_at TEXT NOT NULL,
            PRIMARY KEY (policy, provider, source, scope, day, kind, instance_type, team, item)
        );
        CREATE TABLE bill_estimates (
            policy TEXT NOT NULL,
            provider TEXT NOT NULL,
            scope TEXT NOT NULL,
            day TEXT NOT NULL,
            instance_type TEXT NOT NULL,
            team TEXT NOT NULL,
            usd TEXT NOT NULL,
            hours TEXT NOT NULL,
            computed_at TEXT NOT NULL,
            PRIMARY KEY (policy, provider, scope, day, instance_type, team)
        );
        """,
    ),
)

LATEST = MIGRATIONS[-1].version

MIGRATION_LOCK = "schema migrations"
LOCK_WAIT_S = 60.0


class LedgerError(GpuplanError):
    """The ledger cannot be used (newer schema, not a database, locked, unreachable)."""


def current_version(conn: Db | sqlite3.Connection, label: str = "ledger") -> int:
    db = _as_db(conn, label)
    if not db.has_table("schema_migrations"):  # a run-only role lacks CREATE: ask first
        db.execute(
            db.ddl(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY,"
                " description TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
        )
    row = db.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def migrate(conn: Db | sqlite3.Connection, path: str, *, upto: int = LATEST) -> list[int]:
    """Apply every migration above the database's version up to ``upto``; the ones applied."""
    db = _as_db(conn, path)
    _wait_for(db, MIGRATION_LOCK, path)
    try:
        have = current_version(db)
        if have > LATEST:
            raise LedgerError(
                f"{path}: ledger schema version {have} is newer than this gpuplan knows "
                f"({LATEST}); upgrade gpuplan or use another --db"
            )
        return [
            migration.version
            for migration in MIGRATIONS
            if have < migration.version <= upto and _apply(db, migration)
        ]
    finally:
        db.unlock(MIGRATION_LOCK)


def _apply(db: Db, migration: Migration) -> bool:
    """Apply one migration in one transaction; False when another process just did."""
    db.begin()
    try:
        row = db.execute(
            "SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,)
        ).fetchone()
        if row is not None:
            db.commit()
            return False
        for statement in migration.sql.split(";"):
            if statement.strip():
                db.execute(db.ddl(statement))
        db.execute(
            "INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, ?, ?)",
            (
                migration.version,
                migration.description,
                datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            ),
        )
        db.commit()
    except BaseException:
        db.rollback()
        raise
    return True


def _wait_for(db: Db, name: str, label: str) -> None:
    deadline = time.monotonic() + LOCK_WAIT_S
    while not db.try_lock(name):
        if time.monotonic() >= deadline:
            raise LedgerError(f"{label}: another gpuplan is migrating the ledger; try again")
        time.sleep(0.2)


def _as_db(conn: Db | sqlite3.Connection, label: str) -> Db:
    if isinstance(conn, sqlite3.Connection):
        from gpuplan.ledger.backend import SqliteDb

        return SqliteDb.wrap(conn, label)
    return conn
