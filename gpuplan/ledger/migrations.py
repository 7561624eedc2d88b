"""The ledger's schema, as numbered migrations applied in order, each in a transaction.

Never edit a released migration: add the next number. ``schema_migrations`` records
what a database has, so an old file upgrades in place and a file written by a newer
gpuplan is refused instead of being misread.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from gpuplan.core.errors import GpuplanError


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
)

LATEST = MIGRATIONS[-1].version


class LedgerError(GpuplanError):
    """The ledger file cannot be used (newer schema, not a database, locked)."""


def current_version(conn: sqlite3.Connection) -> int:
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    row = conn.execute("SELECT MAX(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def migrate(conn: sqlite3.Connection, path: str, *, upto: int = LATEST) -> list[int]:
    """Apply every migration above the database's version up to ``upto``; the ones applied."""
    have = current_version(conn)
    conn.commit()
    if have > LATEST:
        raise LedgerError(
            f"{path}: ledger schema version {have} is newer than this gpuplan knows "
            f"({LATEST}); upgrade gpuplan or use another --db"
        )
    applied: list[int] = []
    for migration in MIGRATIONS:
        if have < migration.version <= upto:
            _apply(conn, migration)
            applied.append(migration.version)
    return applied


def _apply(conn: sqlite3.Connection, migration: Migration) -> None:
    # executescript would commit on its own; run the statements inside one transaction.
    conn.execute("BEGIN IMMEDIATE")
    try:
        for statement in migration.sql.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute(
            "INSERT INTO schema_migrations (version, description, applied_at)"
            " VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))",
            (migration.version, migration.description),
        )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
