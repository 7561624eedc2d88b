"""What a killed run leaves behind: intents without an outcome, and a run never finished.

An intent (outcome ``pending``) is handed out with the policy, scope and run lock of the
run that wrote it, so the caller settles only the intents its own run could have made
(:func:`gpuplan.usecases.lifecycle.reconcile.reconcile`). A run is alive while its run lock is held
in another session (PostgreSQL); a ledger file's runs take turns through the lock file
beside it, so an unfinished run there is dead once another run holds that lock.

:func:`close_killed_runs` closes the dead, unfinished runs of one policy whose intents
are all settled: status ``killed``, ``finished_at`` the closing time, and the summary
names the run (and shard) that closed it. A dead run that still has pending intents is
left for the run that can settle them (its own shard's next run).
"""

from __future__ import annotations

import json
from datetime import datetime

from gpuplan.ledger.records import PENDING, PendingAction
from gpuplan.ledger.store import Ledger

KILLED = "killed"
"""The status of a run that died before it finished (closed by a later run)."""


def pending_actions(ledger: Ledger, *, with_alive: bool = False) -> list[PendingAction]:
    """Intents with no outcome, oldest first, whose run is not alive elsewhere; with
    ``with_alive`` those of live runs too, marked ``alive`` (not to be settled)."""
    rows = ledger.select(
        "SELECT a.id, a.run_id, a.provider, a.region, a.instance_id, a.action, a.acted_at,"
        " r.lock_name, r.policy, a.scope, d.account FROM actions a JOIN runs r ON a.run_id = r.id"
        " LEFT JOIN decisions d ON a.decision_id = d.id WHERE a.outcome = ? ORDER BY a.id",
        (PENDING,),
    )
    alive: dict[str, bool] = {}
    out: list[PendingAction] = []
    for r in rows:
        lock = str(r[7] or "")
        living = bool(lock) and alive.setdefault(lock, ledger.lock_held_elsewhere(lock))
        if living and not with_alive:
            continue
        out.append(
            PendingAction(
                int(r[0]),
                int(r[1]),
                r[2],
                r[3],
                r[4],
                r[5],
                datetime.fromisoformat(r[6]),
                policy=str(r[8]),
                scope=str(r[9] or ""),
                lock_name=lock,
                account=str(r[10] or ""),
                alive=living,
            )
        )
    return out


def close_killed_runs(
    ledger: Ledger, *, kind: str, policy: str, closer: int, shard: str, at: datetime
) -> list[int]:
    """Close the dead, unfinished ``kind`` runs of ``policy`` (other than ``closer``)
    that have no pending intent left; the ids closed, oldest first."""
    rows = ledger.select(
        "SELECT r.id, r.lock_name, r.started_at FROM runs r WHERE r.finished_at IS NULL"
        " AND r.kind = ? AND r.policy = ? AND r.id <> ? AND NOT EXISTS (SELECT 1 FROM"
        " actions a WHERE a.run_id = r.id AND a.outcome = ?) ORDER BY r.id",
        (kind, policy, closer, PENDING),
    )
    closed: list[int] = []
    for run_id, lock, _started in rows:
        if lock and ledger.lock_held_elsewhere(str(lock)):
            continue  # alive: a concurrent run of another shard
        summary = {
            "closed_by_run": closer,
            "closed_by_shard": shard or None,
            "closed_at": at.isoformat(),
            "problems": [f"killed before it finished; closed by run {closer}"],
        }
        with ledger.transaction() as conn:
            conn.execute(
                "UPDATE runs SET finished_at = ?, status = ?, summary = ?"
                " WHERE id = ? AND finished_at IS NULL",
                (at.isoformat(), KILLED, json.dumps(summary), int(run_id)),
            )
        closed.append(int(run_id))
    return closed
