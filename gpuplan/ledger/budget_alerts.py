"""Budget alerts: one row per policy, month and threshold, claimed before sending.

The claim of :mod:`gpuplan.ledger.audit_alerts`, on the budget's ``alerts_sent`` table
(claim columns from migration 10): a run inserts the row as ``claimed`` (its token, an
expiry) in one atomic statement before it sends the message, so of several concurrent
``gpuplan budget`` runs exactly one sends it. Delivered: the row becomes ``sent`` for
good. Failed: the claim is given back and a later run tries again. A run killed between
claim and confirmation leaves a claim that expires (at least once, never twice while a
claim holds). Rows written before migration 10 read as ``sent``.
"""

from __future__ import annotations

from datetime import datetime

from gpuplan.core.audit.alerts import AlertClaim
from gpuplan.ledger.claims import stamp
from gpuplan.ledger.store import Ledger

CLAIMED = AlertClaim.CLAIMED
SENT = AlertClaim.SENT
_KEY = "policy = ? AND month = ? AND threshold_percent = ?"
_CLAIM = (
    "INSERT INTO alerts_sent (policy, month, threshold_percent, sent_at, channel, state,"
    " claimed_by, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (policy, month, threshold_percent) DO UPDATE SET"
    " sent_at = excluded.sent_at, state = excluded.state,"
    " claimed_by = excluded.claimed_by, expires_at = excluded.expires_at"
    f" WHERE alerts_sent.state = '{CLAIMED}' AND alerts_sent.expires_at <= excluded.sent_at"
)


def claim_budget_alert(
    ledger: Ledger, policy: str, month: str, percent: float, *, token: str, at: datetime,
    until: datetime, channel: str = "webhook",
) -> AlertClaim | None:  # fmt: skip
    """Claim the alert for the run ``token``; None when it holds the claim now, else the
    row's state (``sent``, or ``claimed`` by another live run)."""
    key = (policy, month, float(percent))
    with ledger.transaction() as conn:
        cur = conn.execute(_CLAIM, (*key, stamp(at), channel, CLAIMED, token, stamp(until)))
        if cur.rowcount == 1:
            return None
        row = conn.execute(f"SELECT state FROM alerts_sent WHERE {_KEY}", key).fetchone()
    return AlertClaim(str(row[0]))


def confirm_budget_alert(
    ledger: Ledger, policy: str, month: str, percent: float, *, token: str, at: datetime
) -> bool:
    """Delivered: ``sent`` for good. False when the claim was lost (expired, retaken)."""
    with ledger.transaction() as conn:
        cur = conn.execute(
            f"UPDATE alerts_sent SET state = ?, sent_at = ? WHERE {_KEY}"
            " AND claimed_by = ? AND state = ?",
            (SENT, stamp(at), policy, month, float(percent), token, CLAIMED),
        )
    return cur.rowcount == 1


def release_budget_alert(
    ledger: Ledger, policy: str, month: str, percent: float, *, token: str
) -> None:
    """Give the claim back (delivery failed): a later run sends the alert."""
    with ledger.transaction() as conn:
        conn.execute(
            f"DELETE FROM alerts_sent WHERE {_KEY} AND claimed_by = ? AND state = ?",
            (policy, month, float(percent), token, CLAIMED),
        )
