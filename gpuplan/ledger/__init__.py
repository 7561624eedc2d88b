"""The local ledger (SQLite): runs, decisions, actions, spend snapshots, alerts sent."""

from __future__ import annotations

from gpuplan.ledger.migrations import LATEST, LedgerError
from gpuplan.ledger.store import (
    DB_ENV,
    ActionRecord,
    DecisionRecord,
    Ledger,
    RunRecord,
    SpendRecord,
    ledger_path,
)

__all__ = [
    "DB_ENV",
    "LATEST",
    "ActionRecord",
    "DecisionRecord",
    "Ledger",
    "LedgerError",
    "RunRecord",
    "SpendRecord",
    "ledger_path",
]
