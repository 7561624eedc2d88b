"""The ledger: what gpuplan decided, did, saw spent and alerted, in SQLite or PostgreSQL.

Where it lives: ``--db``, else ``GPUPLAN_DB``, else ``ledger.sqlite3`` under the user's
data directory (a scheduled job points it at persistent storage). A value starting
``postgresql://`` (or ``postgres://``) names a PostgreSQL database instead of a file:
shards on several machines then share one ledger (:mod:`gpuplan.ledger.postgres`; the
password comes from ``PGPASSFILE`` or ``PGPASSWORD`` and is never shown). Every write
is one transaction; times are passed in (timezone-aware UTC) and stored as ISO text;
money is stored as decimal text so it reads back exactly.

Actions are written twice: an intent (outcome ``pending``) committed before the cloud
is called, then the outcome. A ``pending`` row left behind is a run killed mid-call;
the next run of the same policy covering the same scope reconciles it
(:mod:`gpuplan.ledger.killed`, :meth:`Ledger.settle_action`) and closes the killed run
(status ``killed``). An action of several steps also writes one row per step, each
settled in turn (:mod:`gpuplan.ledger.steps`). On PostgreSQL an intent whose run is
still alive (its run lock held by another session: a concurrent shard mid-call) is not
handed out for reconciling.

Before acting on an instance a run claims it (:mod:`gpuplan.ledger.claims`); a claim
holds until it expires, so two runs that reach one instance (shards set up to
overlap by mistake) never both act on it. The connection, its transactions and locks
are :class:`~gpuplan.ledger.handle.LedgerHandle`'s; any database failure leaves as one
:class:`LedgerError` line naming the ledger (a URL without its password).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from gpuplan.ledger import rows as rows_mod
from gpuplan.ledger.backend import Cursor
from gpuplan.ledger.handle import LedgerHandle
from gpuplan.ledger.location import DB_ENV, DB_FILE, ledger_location, ledger_path
from gpuplan.ledger.migrations import LedgerError
from gpuplan.ledger.records import (
    PENDING,
    ActionRecord,
    DecisionRecord,
    PendingAction,
    RunRecord,
    SpendRecord,
)


def existing_ledger(
    explicit: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Ledger | None:
    """The ledger if there is one to read: a PostgreSQL ledger, or a file that exists
    (a missing file is not created)."""
    where = ledger_location(explicit, environ)
    if isinstance(where, Path) and not where.exists():
        return None
    return Ledger(where, environ=environ)


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
        str(r[8] or ""),
    )


def _money(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


class Ledger(LedgerHandle):
    """A handle on one ledger (file or PostgreSQL), migrated to the current schema, with
    the records gpuplan writes and reads."""

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
            return conn.insert(
                "INSERT INTO runs (kind, policy, started_at, dry_run, window_minutes, shard,"
                " lock_name) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    kind,
                    policy,
                    started_at.isoformat(),
                    int(dry_run),
                    window_minutes,
                    self.shard,
                    self.lock_name,
                ),
            )

    def record_decision(self, run_id: int, d: DecisionRecord) -> int:
        with self.transaction() as conn:
            return conn.insert(
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

    def record_action(self, run_id: int, a: ActionRecord) -> int:
        with self.transaction() as conn:
            return conn.insert(
                "INSERT INTO actions (run_id, decision_id, provider, region, instance_id,"
                " action, outcome, detail, acted_at, scope) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    a.scope,
                ),
            )

    def settle_action(self, action_id: int, outcome: str, detail: str, at: datetime) -> None:
        """Replace an intent's ``pending`` with what happened."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE actions SET outcome = ?, detail = ?, acted_at = ? WHERE id = ?",
                (outcome, detail, at.isoformat(), action_id),
            )

    def pending_actions(self, *, with_alive: bool = False) -> list[PendingAction]:
        """Intents with no outcome, oldest first (left by killed runs); an intent whose
        run is alive in another session is left out unless ``with_alive``, which hands
        it out marked ``alive`` (:mod:`gpuplan.ledger.killed`)."""
        from gpuplan.ledger.killed import pending_actions

        return pending_actions(self, with_alive=with_alive)

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
        sql = (
            "SELECT id, kind, policy, started_at, finished_at, dry_run, status, summary, shard"
            " FROM runs"
        )
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

    # Spend and alerts (used by ``gpuplan budget`` and the planner) -----------------

    def record_spend(self, s: SpendRecord) -> int:
        with self.transaction() as conn:
            return conn.insert(
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
            "SELECT 1 FROM alerts_sent WHERE policy = ? AND month = ? AND threshold_percent = ?"
            " AND state = 'sent'",  # a live claim (gpuplan.ledger.budget_alerts) is not a send
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
                "INSERT INTO alerts_sent (policy, month, threshold_percent, sent_at, channel)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (policy, month, float(threshold_percent), sent_at.isoformat(), channel),
            )
        return cur.rowcount == 1


__all__ = [
    "DB_ENV",
    "DB_FILE",
    "PENDING",
    "ActionRecord",
    "Cursor",
    "DecisionRecord",
    "Ledger",
    "LedgerError",
    "PendingAction",
    "RunRecord",
    "SpendRecord",
    "existing_ledger",
    "ledger_location",
    "ledger_path",
]
