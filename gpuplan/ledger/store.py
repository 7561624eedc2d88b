"""The local ledger: what gpuplan decided, did, saw spent and alerted, in SQLite.

Where it lives: ``--db PATH``, else ``GPUPLAN_DB``, else ``ledger.sqlite3`` under the
user's data directory (a scheduled job points it at persistent storage). Every write
is one transaction; times are passed in (timezone-aware UTC) and stored as ISO text;
money is stored as decimal text so it reads back exactly.

Actions are written twice: an intent (outcome ``pending``) committed before the cloud
is called, then the outcome. A ``pending`` row left behind is a run killed mid-call;
the next run reconciles it (:meth:`Ledger.pending_actions`, :meth:`Ledger.settle_action`).
Any SQLite failure leaves as one :class:`LedgerError` line naming the file; a failing
ROLLBACK never hides the error that caused it.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from gpuplan.ledger import rows as rows_mod
from gpuplan.ledger.files import private_file
from gpuplan.ledger.migrations import LedgerError, migrate

DB_ENV = "GPUPLAN_DB"
DB_FILE = "ledger.sqlite3"


def ledger_path(
    explicit: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Path:
    """The ledger file: the flag, else ``GPUPLAN_DB``, else the user data directory."""
    if explicit:
        return Path(explicit)
    env = (os.environ if environ is None else environ).get(DB_ENV)
    if env:
        return Path(env)
    from platformdirs import user_data_dir

    return Path(user_data_dir("gpuplan", appauthor=False)) / DB_FILE


@dataclass(frozen=True)
class DecisionRecord:
    """One instance's verdict in a run (the lifecycle manager's decision)."""

    provider: str
    region: str
    instance_id: str
    instance_type: str
    state: str
    verdict: str
    reason: str
    planned_action: str
    decided_at: datetime
    account: str = ""
    zone: str | None = None
    hourly_usd: Decimal | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    gpu_count: float = 0


@dataclass(frozen=True)
class ActionRecord:
    """What was done to one instance, and how it went."""

    provider: str
    region: str
    instance_id: str
    action: str
    outcome: str
    """``stopped``, ``skipped``, ``failed``, ``notified`` ..."""
    acted_at: datetime
    detail: str = ""
    decision_id: int | None = None


PENDING = "pending"
"""The outcome of an action whose cloud call may or may not have happened yet."""


@dataclass(frozen=True)
class PendingAction:
    """An intent without an outcome: the run that wrote it was killed mid-call."""

    id: int
    run_id: int
    provider: str
    region: str
    instance_id: str
    action: str
    acted_at: datetime


@dataclass(frozen=True)
class SpendRecord:
    """A month-to-date spend estimate for one policy."""

    policy: str
    month: str
    """``YYYY-MM``."""
    recorded_at: datetime
    month_to_date_usd: Decimal
    forecast_usd: Decimal
    monthly_usd: Decimal | None
    instances: int
    detail: Mapping[str, Any] = field(default_factory=dict)
    run_id: int | None = None


@dataclass(frozen=True)
class RunRecord:
    id: int
    kind: str
    policy: str
    started_at: datetime
    finished_at: datetime | None
    dry_run: bool
    status: str
    summary: dict[str, Any]


def _run_record(r: Any) -> RunRecord:
    return RunRecord(
        int(r[0]),
        str(r[1]),
        str(r[2]),
        rows_mod.when(r[3], "started_at"),
        rows_mod.maybe_when(r[4], "finished_at"),
        bool(r[5]),
        str(r[6]),
        rows_mod.run_summary(r[7]),
    )


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _money(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


class Ledger:
    """A handle on one ledger file; migrates it to the current schema on open."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._depth = 0
        """How deep in nested ``transaction()`` blocks we are (0: none open)."""
        self.damaged: list[rows_mod.DamagedRow] = []
        """Rows that reading skipped because they could not be decoded (for notices)."""
        try:
            if str(path) != ":memory:":
                private_file(self.path)
            self._conn = sqlite3.connect(str(path), isolation_level=None, timeout=30)
            # A damaged text cell reads with U+FFFD instead of raising UnicodeDecodeError.
            self._conn.text_factory = lambda raw: raw.decode("utf-8", "replace")
            self._conn.execute("PRAGMA foreign_keys = ON")
            migrate(self._conn, str(path))
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            raise LedgerError(f"{path}: cannot use as the gpuplan ledger: {exc}") from None
        except OSError as exc:
            raise LedgerError(f"{path}: cannot create the ledger: {exc.strerror}") from None

    @classmethod
    def open(
        cls,
        explicit: str | os.PathLike[str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Ledger:
        """The ledger named by ``--db``, ``GPUPLAN_DB`` or the default location."""
        return cls(ledger_path(explicit, environ))

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
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
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise self._failed(exc) from None
        self._depth = 1
        try:
            yield self._conn
            self._conn.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):  # the first error is the one to report
                self._conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise self._failed(exc) from None
            raise
        finally:
            self._depth = 0

    def _failed(self, exc: sqlite3.Error) -> LedgerError:
        return LedgerError(f"{self.path}: ledger write failed: {exc}")

    # Runs, decisions, actions (used by the lifecycle manager) -------------------

    def start_run(
        self,
        kind: str,
        policy: str,
        started_at: datetime,
        *,
        dry_run: bool = True,
        window_minutes: int = 60,
    ) -> int:
        with self.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO runs (kind, policy, started_at, dry_run, window_minutes)"
                " VALUES (?, ?, ?, ?, ?)",
                (kind, policy, started_at.isoformat(), int(dry_run), window_minutes),
            )
        return int(cur.lastrowid or 0)

    def record_decision(self, run_id: int, d: DecisionRecord) -> int:
        with self.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO decisions (run_id, provider, account, region, zone, instance_id,"
                " instance_type, state, verdict, reason, planned_action, hourly_usd, labels,"
                " decided_at, gpu_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    d.provider,
                    d.account,
                    d.region,
                    d.zone,
                    d.instance_id,
                    d.instance_type,
                    d.state,
                    d.verdict,
                    d.reason,
                    d.planned_action,
                    _money(d.hourly_usd),
                    json.dumps(dict(d.labels), sort_keys=True),
                    d.decided_at.isoformat(),
                    float(d.gpu_count),
                ),
            )
        return int(cur.lastrowid or 0)

    def record_action(self, run_id: int, a: ActionRecord) -> int:
        with self.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO actions (run_id, decision_id, provider, region, instance_id,"
                " action, outcome, detail, acted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    a.decision_id,
                    a.provider,
                    a.region,
                    a.instance_id,
                    a.action,
                    a.outcome,
                    a.detail,
                    a.acted_at.isoformat(),
                ),
            )
        return int(cur.lastrowid or 0)

    def settle_action(self, action_id: int, outcome: str, detail: str, at: datetime) -> None:
        """Replace an intent's ``pending`` with what happened."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE actions SET outcome = ?, detail = ?, acted_at = ? WHERE id = ?",
                (outcome, detail, at.isoformat(), action_id),
            )

    def pending_actions(self) -> list[PendingAction]:
        """Intents with no outcome, oldest first (left by killed runs)."""
        rows = self._conn.execute(
            "SELECT id, run_id, provider, region, instance_id, action, acted_at FROM actions"
            " WHERE outcome = ? ORDER BY id",
            (PENDING,),
        ).fetchall()
        return [
            PendingAction(int(r[0]), int(r[1]), r[2], r[3], r[4], r[5], _time(r[6])) for r in rows
        ]

    def finish_run(
        self,
        run_id: int,
        finished_at: datetime,
        status: str,
        summary: Mapping[str, Any] | None = None,
    ) -> None:
        with self.transaction() as conn:
            conn.execute(
                "UPDATE runs SET finished_at = ?, status = ?, summary = ? WHERE id = ?",
                (
                    finished_at.isoformat(),
                    status,
                    json.dumps(dict(summary or {}), default=str),
                    run_id,
                ),
            )

    def runs(self, *, limit: int = 50, policy: str | None = None) -> list[RunRecord]:
        """The latest runs, newest first."""
        sql = "SELECT id, kind, policy, started_at, finished_at, dry_run, status, summary FROM runs"
        params: tuple[Any, ...] = ()
        if policy is not None:
            sql += " WHERE policy = ?"
            params = (policy,)
        sql += " ORDER BY started_at DESC, id DESC LIMIT ?"
        rows = self._conn.execute(sql, (*params, limit)).fetchall()
        good: list[RunRecord]
        good, damaged = rows_mod.decode_rows("runs", rows, _run_record)
        self.damaged.extend(damaged)
        return good

    def select(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Rows of one read-only query (for :mod:`gpuplan.ledger.queries`)."""
        try:
            return list(self._conn.execute(sql, params).fetchall())
        except sqlite3.Error as exc:
            raise LedgerError(f"{self.path}: ledger read failed: {exc}") from None

    def count(self, table: str) -> int:
        """Rows in one of the ledger's tables (for reports and tests)."""
        if table not in {"runs", "decisions", "actions", "spend_snapshots", "alerts_sent"}:
            raise ValueError(f"not a ledger table: {table}")
        return int(self._conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])

    # Spend and alerts (used by ``gpuplan budget`` and the planner) -----------------

    def record_spend(self, s: SpendRecord) -> int:
        with self.transaction() as conn:
            cur = conn.execute(
                "INSERT INTO spend_snapshots (run_id, policy, month, recorded_at,"
                " month_to_date_usd, forecast_usd, monthly_usd, instances, detail)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    s.run_id,
                    s.policy,
                    s.month,
                    s.recorded_at.isoformat(),
                    str(s.month_to_date_usd),
                    str(s.forecast_usd),
                    _money(s.monthly_usd),
                    s.instances,
                    json.dumps(dict(s.detail), default=str),
                ),
            )
        return int(cur.lastrowid or 0)

    def last_spend(self, policy: str, month: str) -> SpendRecord | None:
        """The latest spend recorded for ``policy`` in ``month`` (``YYYY-MM``), if any."""
        row = self._conn.execute(
            "SELECT run_id, recorded_at, month_to_date_usd, forecast_usd, monthly_usd,"
            " instances, detail FROM spend_snapshots WHERE policy = ? AND month = ?"
            " ORDER BY recorded_at DESC, id DESC LIMIT 1",
            (policy, month),
        ).fetchone()
        if row is None:
            return None
        try:
            return SpendRecord(
                policy=policy,
                month=month,
                run_id=row[0],
                recorded_at=rows_mod.when(row[1], "recorded_at"),
                month_to_date_usd=rows_mod.money(row[2], "month_to_date_usd"),
                forecast_usd=rows_mod.money(row[3], "forecast_usd"),
                monthly_usd=rows_mod.maybe_money(row[4], "monthly_usd"),
                instances=int(row[5]),
                detail=rows_mod.json_object(row[6], "detail"),
            )
        except (rows_mod.RowError, TypeError, ValueError) as exc:
            self.damaged.append(rows_mod.DamagedRow("spend_snapshots", f"of {month}", str(exc)))
            return None

    def alert_sent(self, policy: str, month: str, threshold_percent: float) -> bool:
        row = self._conn.execute(
            "SELECT 1 FROM alerts_sent WHERE policy = ? AND month = ? AND threshold_percent = ?",
            (policy, month, float(threshold_percent)),
        ).fetchone()
        return row is not None

    def mark_alert(
        self,
        policy: str,
        month: str,
        threshold_percent: float,
        sent_at: datetime,
        channel: str = "webhook",
    ) -> bool:
        """Remember an alert; False when it was already recorded (another run sent it)."""
        with self.transaction() as conn:
            cur = conn.execute(
                "INSERT OR IGNORE INTO alerts_sent (policy, month, threshold_percent, sent_at,"
                " channel) VALUES (?, ?, ?, ?, ?)",
                (policy, month, float(threshold_percent), sent_at.isoformat(), channel),
            )
        return cur.rowcount == 1


__all__ = [
    "DB_ENV",
    "PENDING",
    "ActionRecord",
    "DecisionRecord",
    "Ledger",
    "LedgerError",
    "PendingAction",
    "RunRecord",
    "SpendRecord",
    "ledger_path",
]
