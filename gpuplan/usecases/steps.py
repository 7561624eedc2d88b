"""Carrying out the steps of an action, each recorded before its call and after it.

The steps come from :data:`gpuplan.core.actions.ACTIONS` (or a table passed in). A
one-step action is one ``adapter.act`` call recorded as its ``actions`` row alone, as
it always was; a composite action (e.g. snapshot then stop) is run here step after
step: ``pending`` committed right before each call, ``done`` or ``failed`` right after,
and the steps after a failed one marked ``not done``. The executor runs a new action's
steps from the first; the next run's reconcile runs a killed action's remaining steps
(:func:`gpuplan.usecases.journal.reconcile`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from gpuplan.core.actions import ActionTable, Call, Snapshotter, Steps, StepState, entry
from gpuplan.core.errors import GpuplanError
from gpuplan.core.instances import Action, GpuInstance
from gpuplan.providers.base import CloudAdapter, ProviderError

Mark = Callable[[int | None, StepState, str, datetime], None]
"""Records one step's state (the journal's :meth:`~gpuplan.usecases.journal.Journal.step`)."""


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


def call_step(adapter: CloudAdapter, inst: GpuInstance, call: Call) -> str:
    """Make one step's call; what to record about it ("" for an acting call)."""
    action = call.action
    if action is not None:
        adapter.act(inst, action)
        return ""
    if isinstance(adapter, Snapshotter):
        return f"snapshot {adapter.snapshot(inst)}"
    raise ProviderError(f"{adapter.scope}: cannot {call.value} instances")


def run_steps(
    adapter: CloudAdapter,
    inst: GpuInstance,
    steps: Sequence[tuple[int | None, Call]],
    mark: Mark,
    now: datetime,
) -> None:
    """Run ``steps`` (step id, call) in order; the first failing step's error is raised
    after it is marked ``failed`` and the rest ``not done``."""
    for index, (step_id, call) in enumerate(steps):
        mark(step_id, StepState.PENDING, "", now)
        try:
            detail = call_step(adapter, inst, call)
        except GpuplanError as exc:
            mark(step_id, StepState.FAILED, exc.message, now)
            for later, _ in steps[index + 1 :]:
                mark(later, StepState.NOT_DONE, f"{call.value} failed", now)
            raise
        mark(step_id, StepState.DONE, detail, now)
