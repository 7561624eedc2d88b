"""Audit alerts already sent: one row per policy, instance and audit period."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from gpuplan.ledger.store import Ledger


def audit_alert_sent(ledger: Ledger, policy: str, instance_id: str, period: str) -> bool:
    with ledger.transaction() as conn:
        row = conn.execute(
            "SELECT 1 FROM audit_alerts_sent WHERE policy = ? AND instance_id = ? AND period = ?",
            (policy, instance_id, period),
        ).fetchone()
    return row is not None


def mark_audit_alert(
    ledger: Ledger, policy: str, instance_id: str, period: str, *, sent_at: datetime,
    busy_percent: float, paid_usd: Decimal,
) -> bool:  # fmt: skip
    """Remember an alert; False when it was already recorded (another run sent it)."""
    with ledger.transaction() as conn:
        cur = conn.execute(
            "INSERT INTO audit_alerts_sent (policy, instance_id, period, sent_at,"
            " busy_percent, paid_usd) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (policy, instance_id, period, sent_at.isoformat(), busy_percent, str(paid_usd)),
        )
    return cur.rowcount == 1
