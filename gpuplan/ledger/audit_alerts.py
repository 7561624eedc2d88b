"""Audit alerts: one row per policy, instance and audit period, claimed before sending.

The same claim as :mod:`gpuplan.ledger.claims`: a run inserts the row as ``claimed``
(its token, an expiry) in one atomic statement before it sends the message, so of
several concurrent ``gpuplan audit --policy`` runs exactly one sends it. After the
message is delivered the row becomes ``sent`` (for good); after a failed delivery the
claim is given back, so a later run tries again. A run killed between claim and
confirmation leaves a claim that expires, after which another run may send it again
(at least once, never twice while a claim holds).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from gpuplan.core.audit.alerts import AlertClaim
from gpuplan.ledger.claims import stamp
from gpuplan.ledger.store import Ledger

CLAIMED = AlertClaim.CLAIMED
SENT = AlertClaim.SENT

_KEY = "policy = ? AND instance_id = ? AND period = ?"
_CLAIM = (
    "INSERT INTO audit_alerts_sent (policy, instance_id, period, sent_at, busy_percent,"
    " paid_usd, state, claimed_by, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (policy, instance_id, period) DO UPDATE SET"
    " sent_at = excluded.sent_at, busy_percent = excluded.busy_percent,"
    " paid_usd = excluded.paid_usd, state = excluded.state,"
    " claimed_by = excluded.claimed_by, expires_at = excluded.expires_at"
    f" WHERE audit_alerts_sent.state = '{CLAIMED}'"
    " AND audit_alerts_sent.expires_at <= excluded.sent_at"
)


@dataclass(frozen=True)
class AlertKey:
    policy: str
    instance_id: str
    period: str

    @property
    def values(self) -> tuple[str, str, str]:
        return (self.policy, self.instance_id, self.period)


@dataclass(frozen=True)
class AlertHolder:
    """Why an alert is not this run's to send: sent already, or claimed by another run."""

    state: AlertClaim
    at: str
    expires_at: str

    @property
    def detail(self) -> str:
        if self.state == SENT:
            return f"sent at {self.at[:19]}Z"
        return (
            f"another gpuplan audit run claimed it at {self.at[:19]}Z until {self.expires_at[:19]}Z"
        )


def claim_audit_alert(
    ledger: Ledger, key: AlertKey, *, token: str, at: datetime, until: datetime,
    busy_percent: float, paid_usd: Decimal,
) -> AlertHolder | None:  # fmt: skip
    """Claim the alert ``key`` for the run ``token``; None when it holds the claim now."""
    with ledger.transaction() as conn:
        cur = conn.execute(
            _CLAIM,
            (*key.values, stamp(at), busy_percent, str(paid_usd), CLAIMED, token, stamp(until)),
        )
        if cur.rowcount == 1:
            return None
        row = conn.execute(
            f"SELECT state, sent_at, expires_at FROM audit_alerts_sent WHERE {_KEY}", key.values
        ).fetchone()
    return AlertHolder(AlertClaim(str(row[0])), str(row[1]), str(row[2]))


def confirm_audit_alert(ledger: Ledger, key: AlertKey, *, token: str, at: datetime) -> bool:
    """The claimed alert was delivered: ``sent`` for good. False when the claim was lost."""
    with ledger.transaction() as conn:
        cur = conn.execute(
            f"UPDATE audit_alerts_sent SET state = ?, sent_at = ? WHERE {_KEY}"
            " AND claimed_by = ? AND state = ?",
            (SENT, stamp(at), *key.values, token, CLAIMED),
        )
    return cur.rowcount == 1


def release_audit_alert(ledger: Ledger, key: AlertKey, *, token: str) -> None:
    """Give the claim back (delivery failed): a later run sends the alert."""
    with ledger.transaction() as conn:
        conn.execute(
            f"DELETE FROM audit_alerts_sent WHERE {_KEY} AND claimed_by = ? AND state = ?",
            (*key.values, token, CLAIMED),
        )


def audit_alert_sent(ledger: Ledger, policy: str, instance_id: str, period: str) -> bool:
    """True when the alert was delivered (a live claim is not a delivery)."""
    with ledger.transaction() as conn:
        row = conn.execute(
            f"SELECT 1 FROM audit_alerts_sent WHERE {_KEY} AND state = ?",
            (policy, instance_id, period, SENT),
        ).fetchone()
    return row is not None


def mark_audit_alert(
    ledger: Ledger, policy: str, instance_id: str, period: str, *, sent_at: datetime,
    busy_percent: float, paid_usd: Decimal,
) -> bool:  # fmt: skip
    """Record an alert as sent without a claim; False when a row was already there."""
    with ledger.transaction() as conn:
        cur = conn.execute(
            "INSERT INTO audit_alerts_sent (policy, instance_id, period, sent_at,"
            " busy_percent, paid_usd, state) VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            (policy, instance_id, period, stamp(sent_at), busy_percent, str(paid_usd), SENT),
        )
    return cur.rowcount == 1
