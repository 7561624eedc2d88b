"""Per-instance claims: of the runs sharing a ledger, one acts on an instance at a time.

A claim is one row per cloud, account, region and instance: the run holding it and
until when. Taking it is one statement (insert, or take over a claim that expired or is
already this run's), atomic on SQLite (``BEGIN IMMEDIATE``) and PostgreSQL (``ON
CONFLICT ... DO UPDATE ... WHERE`` locks the row), so of two runs racing for an
instance exactly one wins. Times are stored in one fixed UTC text form so that they
compare as text in both databases.

Settling a killed run's intent takes the same claim (:func:`claim_to_settle`): it may
also be taken over from the run that wrote the intent (found dead) and from a holder
whose run lock is free (a settling run killed in turn), each take-over one conditional
statement, so of two runs settling one intent at once exactly one does it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from gpuplan.ledger.records import ClaimHolder, InstanceKey
from gpuplan.ledger.store import Ledger

_CLAIM = (
    "INSERT INTO instance_claims (provider, account, region, instance_id, run_id, claimed_at,"
    " expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (provider, account, region, instance_id) DO UPDATE SET"
    " run_id = excluded.run_id, claimed_at = excluded.claimed_at,"
    " expires_at = excluded.expires_at"
    " WHERE instance_claims.expires_at <= excluded.claimed_at"
    " OR instance_claims.run_id = excluded.run_id"
    " OR instance_claims.run_id = ?"
)
_KEY = "provider = ? AND account = ? AND region = ? AND instance_id = ?"


def stamp(at: datetime) -> str:
    """``at`` as fixed-width UTC text, which compares as time in both databases."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def claim_instance(
    ledger: Ledger,
    run_id: int,
    key: InstanceKey,
    at: datetime,
    until: datetime,
    take_from: int | None = None,
) -> ClaimHolder | None:
    """Claim ``key`` for ``run_id`` until ``until``; None when this run holds it now,
    else the other run that holds it (its claim not yet expired at ``at``).
    ``take_from``: a dead run whose claim may be taken over before it expires."""
    where = (key.provider, key.account, key.region, key.instance_id)
    dead = -1 if take_from is None else take_from  # run ids start at 1
    with ledger.transaction() as conn:
        cur = conn.execute(_CLAIM, (*where, run_id, stamp(at), stamp(until), dead))
        if cur.rowcount == 1:
            return None
        row = conn.execute(
            f"SELECT run_id, claimed_at, expires_at FROM instance_claims WHERE {_KEY}", where
        ).fetchone()
    return ClaimHolder(int(row[0]), str(row[1]), str(row[2]))


def release_instance(ledger: Ledger, run_id: int, key: InstanceKey) -> None:
    """Give back ``run_id``'s claim on ``key`` (nothing was done to the instance)."""
    with ledger.transaction() as conn:
        conn.execute(
            f"DELETE FROM instance_claims WHERE {_KEY} AND run_id = ?",
            (key.provider, key.account, key.region, key.instance_id, run_id),
        )


def claim_to_settle(
    ledger: Ledger,
    run_id: int,
    key: InstanceKey,
    at: datetime,
    until: datetime,
    *,
    writer: int,
    own_lock: str,
) -> ClaimHolder | None:
    """Claim ``key`` to settle an intent that the dead run ``writer`` left on it; None
    when this run holds it now, else the live run that does (it settles the intent).

    The writer's claim is taken over at once; another holder's when it expired, or when
    its run is dead (:func:`run_is_dead`), taken from exactly that holder."""
    holder = claim_instance(ledger, run_id, key, at, until, take_from=writer)
    if holder is None or not run_is_dead(ledger, holder.run_id, own_lock):
        return holder
    return claim_instance(ledger, run_id, key, at, until, take_from=holder.run_id)


def run_is_dead(ledger: Ledger, run_id: int, own_lock: str) -> bool:
    """Whether run ``run_id`` is known not to be running: its run lock is free. A run
    without a lock (library use) is never known dead: its claims wait for expiry. On a
    ledger file only a caller holding the lock beside it (``own_lock``) can tell."""
    row = ledger.select("SELECT lock_name FROM runs WHERE id = ?", (run_id,))
    lock = str(row[0][0] or "") if row else ""
    if not lock or (ledger.dialect == "sqlite" and not own_lock):
        return False
    return not ledger.lock_held_elsewhere(lock)


def claim_holder(ledger: Ledger, key: InstanceKey) -> ClaimHolder | None:
    """The run holding ``key``'s claim (expired or not); None when none does."""
    rows = ledger.select(
        f"SELECT run_id, claimed_at, expires_at FROM instance_claims WHERE {_KEY}",
        (key.provider, key.account, key.region, key.instance_id),
    )
    return ClaimHolder(int(rows[0][0]), str(rows[0][1]), str(rows[0][2])) if rows else None
