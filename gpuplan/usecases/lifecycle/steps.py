"""Carrying out the steps of an action, each recorded before its call and after it.

The steps come from :data:`gpuplan.core.lifecycle.actions.ACTIONS` (or a table passed in). A
one-step action is one ``adapter.act`` call recorded as its ``actions`` row alone, as
it always was; a composite action (e.g. snapshot then stop) is run here step after
step: ``pending`` committed right before each call with a new label (``gpuplan-step=``
a random token) that the call gives what it makes, ``done`` (with the id of what it
made) or ``failed`` right after, before the next call, and the steps after a failed
one marked ``not done``. What a call cut short by a kill made is found by its label
(:func:`made_by`). The executor runs a new action's
steps from the first; the next run's reconcile runs a killed action's remaining steps
(:func:`gpuplan.usecases.lifecycle.reconcile.reconcile`).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from gpuplan.core.errors import GpuplanError
from gpuplan.core.lifecycle.actions import ActionTable, Call, Snapshotter, Steps, StepState, entry
from gpuplan.core.lifecycle.instances import Action, GpuInstance
from gpuplan.providers.base import CloudAdapter, ProviderError

LABEL = "gpuplan-step"
"""The tag that a step's call gives what it makes (value: the step's label)."""


class Mark(Protocol):
    """Records one step's state (the journal's
    :meth:`~gpuplan.usecases.lifecycle.journal.Journal.step`)."""

    def __call__(
        self,
        step_id: int | None,
        state: StepState,
        detail: str,
        now: datetime,
        *,
        label: str = "",
        made: Sequence[str] = (),
    ) -> None: ...


def calls_for(
    inst: GpuInstance, planned: Action, do: Action, table: ActionTable
) -> tuple[Call, ...]:
    """The calls that carry out ``do`` on ``inst``'s cloud: the steps of the policy's
    ``planned`` action when they amount to ``do`` (Azure stop: a deallocate), else those
    of ``do`` itself (hibernate fallen back to stop); one call, ``do``, where the table
    has no steps for it (the adapter then says whether it can)."""
    for action in (planned, do):
        found = entry(inst.provider, action, table)
        if isinstance(found, Steps) and found.do is do:
            return tuple(s.call for s in found.steps)
    return (Call(do.value),)


def call_step(adapter: CloudAdapter, inst: GpuInstance, call: Call, label: str) -> str:
    """Make one step's call; the id of what it made ("" for an acting call)."""
    action = call.action
    if action is not None:
        adapter.act(inst, action)
        return ""
    if isinstance(adapter, Snapshotter):
        return adapter.snapshot(inst, label)
    raise ProviderError(f"{adapter.scope}: cannot {call.value} instances")


def made_by(adapter: CloudAdapter, inst: GpuInstance, call: Call, label: str) -> list[str]:
    """What a call cut short by a kill made, found by its label (empty: nothing found,
    or a call that makes nothing)."""
    if call.action is None and label and isinstance(adapter, Snapshotter):
        return adapter.snapshots_labelled(inst, label)
    return []


def run_steps(
    adapter: CloudAdapter,
    inst: GpuInstance,
    steps: Sequence[tuple[int | None, Call]],
    mark: Mark,
    now: datetime,
) -> None:
    """Run ``steps`` (step id, call) in order, each marked ``pending`` with a new label
    before its call and ``done`` with what it made right after (before the next call);
    the first failing step's error is raised after it is marked ``failed`` and the rest
    ``not done``."""
    for index, (step_id, call) in enumerate(steps):
        label = f"{LABEL}={secrets.token_hex(8)}"
        mark(step_id, StepState.PENDING, "", now, label=label)
        try:
            made = call_step(adapter, inst, call, label)
        except GpuplanError as exc:
            mark(step_id, StepState.FAILED, exc.message, now)
            for later, _ in steps[index + 1 :]:
                mark(later, StepState.NOT_DONE, f"{call.value} failed", now)
            raise
        said = f"{call.value} {made}" if made else ""
        mark(step_id, StepState.DONE, said, now, made=[made] if made else ())
