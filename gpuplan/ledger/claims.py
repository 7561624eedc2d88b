"""Per-instance claims: of the runs sharing a ledger, one acts on an instance at a time.

A claim is one row per cloud, account, region and instance: the run holding it and
until when. Taking it is one statement (insert, or take over a claim that expired or is
already this run's), atomic on SQLite (``BEGIN IMMEDIATE``) and PostgreSQL (``ON
CONFLICT ... DO UPDATE ... WHERE`` locks the row), so of two runs racing for an
instance exactly one wins. Times are stored in one fixed UTC text form so that they
compare as text in both databases.
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
)
_KEY = "provider = ? AND account = ? AND region = ? AND instance_id = ?"


def stamp(at: datetime) -> str:
    """``at`` as fixed-width UTC text, which compares as time in both databases."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def claim_instance(
    ledger: Ledger, run_id: int, key: InstanceKey, at: datetime, until: datetime
) -> ClaimHolder | None:
    """Claim ``key`` for ``run_id`` until ``until``; None when this run holds it now,
    else the other run that holds it (its claim not yet expired at ``at``)."""
    where = (key.provider, key.account, key.region, key.instance_id)
    with ledger.transaction() as conn:
        cur = conn.execute(_CLAIM, (*where, run_id, stamp(at), stamp(until)))
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
