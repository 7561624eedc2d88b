"""The local ledger (SQLite): runs, decisions, actions, spend snapshots, alerts sent."""

from __future__ import annotations

from gpuplan.ledger.migrations import LATEST, LedgerError
from gpuplan.ledger.store import (
    DB_ENV,
    PENDING,
    ActionRecord,
    DecisionRecord,
    Ledger,
    PendingAction,
    RunRecord,
    SpendRecord,
    ledger_path,
)

__all__ = [
    "DB_ENV",
    "LATEST",
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
