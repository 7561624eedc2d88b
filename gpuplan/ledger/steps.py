"""The steps of a composite action (``action_steps``): one row per step, in order.

A one-step action (stop, hibernate, suspend, deallocate, terminate) is its ``actions``
row alone, as it always was. An action of several steps (e.g. snapshot then stop) also
writes one row per step, all ``planned``, in the transaction of its intent; each step
is then marked ``pending`` (committed) right before its call and ``done`` or
``failed`` right after, so a run killed between or during steps leaves rows that say
how far it got (:func:`gpuplan.usecases.journal.reconcile` reads them back).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from gpuplan.core.actions import Call, StepState
from gpuplan.ledger.handle import LedgerHandle
from gpuplan.ledger.migrations import LedgerError


@dataclass(frozen=True)
class StepRecord:
    """One step of a recorded action, as the ledger holds it."""

    id: int
    action_id: int
    step: int
    """Its place in the action, from 1."""
    call: Call
    state: StepState
    detail: str


def record_steps(
    ledger: LedgerHandle, action_id: int, calls: Sequence[Call], at: datetime
) -> list[int]:
    """One ``planned`` row per call of ``action_id``, in order; their ids."""
    with ledger.transaction() as conn:
        return [
            conn.insert(
                "INSERT INTO action_steps (action_id, step, provider_call, state, detail,"
                " updated_at) VALUES (?, ?, ?, ?, ?, ?)",
                (action_id, index, call.value, StepState.PLANNED.value, "", at.isoformat()),
            )
            for index, call in enumerate(calls, start=1)
        ]


def mark_step(
    ledger: LedgerHandle, step_id: int, state: StepState, detail: str, at: datetime
) -> None:
    """Move one step to ``state`` (committed before the next call is made)."""
    with ledger.transaction() as conn:
        conn.execute(
            "UPDATE action_steps SET state = ?, detail = ?, updated_at = ? WHERE id = ?",
            (state.value, detail, at.isoformat(), step_id),
        )


def action_steps(ledger: LedgerHandle, action_id: int) -> list[StepRecord]:
    """The steps of ``action_id`` in order; empty for a one-step action."""
    rows = ledger.select(
        "SELECT id, action_id, step, provider_call, state, detail FROM action_steps"
        " WHERE action_id = ? ORDER BY step",
        (action_id,),
    )
    try:
        return [
            StepRecord(int(r[0]), int(r[1]), int(r[2]), Call(r[3]), StepState(r[4]), str(r[5]))
            for r in rows
        ]
    except ValueError as exc:
        raise LedgerError(f"{ledger.label}: unreadable step of action {action_id}: {exc}") from None
