"""The steps of a composite action (``action_steps``): one row per step, in order.

A one-step action (stop, hibernate, suspend, deallocate, terminate) is its ``actions``
row alone, as it always was. An action of several steps (e.g. snapshot then stop) also
writes one row per step, all ``planned``, in the transaction of its intent; each step
is then marked ``pending`` (committed) right before its call, with the label the call
gives what it makes, and ``done`` or ``failed`` right after, with the ids it made
(``made``: a snapshot's id), so a run killed between or during steps leaves rows that
say how far it got and what exists (:func:`gpuplan.usecases.lifecycle.reconcile.reconcile` reads
them back, and looks up by label what a call cut short made).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from gpuplan.core.lifecycle.actions import Call, StepState
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
    label: str = ""
    """The label its call gave what it made (written before the call)."""
    made: tuple[str, ...] = ()
    """The ids of what its call made (a snapshot), recorded before the next step."""


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
    ledger: LedgerHandle,
    step_id: int,
    state: StepState,
    detail: str,
    at: datetime,
    *,
    label: str = "",
    made: Sequence[str] = (),
) -> None:
    """Move one step to ``state`` (committed before the next call is made); a ``label``
    or ``made`` given is recorded with it."""
    sets, values = ["state = ?", "detail = ?", "updated_at = ?"], [state.value, detail]
    values.append(at.isoformat())
    if label:
        sets.append("label = ?")
        values.append(label)
    if made:
        sets.append("made = ?")
        values.append(" ".join(made))
    with ledger.transaction() as conn:
        conn.execute(f"UPDATE action_steps SET {', '.join(sets)} WHERE id = ?", (*values, step_id))


def action_steps(ledger: LedgerHandle, action_id: int) -> list[StepRecord]:
    """The steps of ``action_id`` in order; empty for a one-step action."""
    rows = ledger.select(
        "SELECT id, action_id, step, provider_call, state, detail, label, made"
        " FROM action_steps WHERE action_id = ? ORDER BY step",
        (action_id,),
    )
    try:
        return [
            StepRecord(
                int(r[0]),
                int(r[1]),
                int(r[2]),
                Call(r[3]),
                StepState(r[4]),
                str(r[5]),
                str(r[6] or ""),
                tuple(str(r[7] or "").split()),
            )
            for r in rows
        ]
    except ValueError as exc:
        raise LedgerError(f"{ledger.label}: unreadable step of action {action_id}: {exc}") from None


def made_in_runs(ledger: LedgerHandle, run_ids: Sequence[int]) -> dict[int, list[dict[str, str]]]:
    """Per run, what the steps of its actions made (e.g. snapshots): instance, call, id."""
    out: dict[int, list[dict[str, str]]] = {r: [] for r in run_ids}
    if not run_ids:
        return out
    marks = ", ".join("?" * len(run_ids))
    rows = ledger.select(
        "SELECT a.run_id, a.instance_id, s.provider_call, s.made FROM action_steps s"
        f" JOIN actions a ON s.action_id = a.id WHERE a.run_id IN ({marks}) AND s.made <> ''"
        " ORDER BY s.action_id, s.step",
        tuple(run_ids),
    )
    for run_id, instance_id, call, made in rows:
        for one in str(made).split():
            out[int(run_id)].append({"instance_id": str(instance_id), "step": str(call), "id": one})
    return out
