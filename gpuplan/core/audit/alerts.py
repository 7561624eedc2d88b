"""Alerts (budget thresholds, audit floors): what happened to each, as enums.

:class:`AlertStatus` is what one run did with one alert, the word the CLI prints and the
JSON's ``status``; :class:`AlertClaim` is the state of an audit alert's ledger row, which
runs share (see :mod:`gpuplan.ledger.audit_alerts`).
"""

from __future__ import annotations

from enum import StrEnum


class AlertStatus(StrEnum):
    SENT = "sent"
    ALREADY_SENT = "already-sent"
    CLAIMED = "claimed"
    """Another run holds the claim and is sending it (audit alerts only)."""
    FAILED = "failed"
    NO_WEBHOOK = "no-webhook"


class AlertClaim(StrEnum):
    CLAIMED = "claimed"
    """A run is sending it; the claim expires if that run dies."""
    SENT = "sent"
    """Delivered, for good."""
