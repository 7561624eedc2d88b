"""The ledger (SQLite file or PostgreSQL): runs, decisions, actions, claims, spend, alerts."""

from __future__ import annotations

from gpuplan.ledger.location import DB_ENV, ledger_location, ledger_path
from gpuplan.ledger.migrations import LATEST, LedgerError
from gpuplan.ledger.records import (
    PENDING,
    ActionRecord,
    ClaimHolder,
    DecisionRecord,
    InstanceKey,
    PendingAction,
    RunRecord,
    SpendRecord,
)
from gpuplan.ledger.store import Ledger, existing_ledger

__all__ = [
    "DB_ENV",
    "LATEST",
    "PENDING",
    "ActionRecord",
    "ClaimHolder",
    "DecisionRecord",
    "InstanceKey",
    "Ledger",
    "LedgerError",
    "PendingAction",
    "RunRecord",
    "SpendRecord",
    "existing_ledger",
    "ledger_location",
    "ledger_path",
]
