"""Settling what killed runs left: their intents read back against the cloud, once.

Promises (docs/lifecycle.md, "Guarantees"; the journal's side is
:mod:`gpuplan.usecases.lifecycle.journal`):
- A run killed between intent and outcome leaves ``pending`` rows, each with the scope
  it was written in. The next applied run of the same policy whose scopes include that
  scope (the killed shard's next run, or a whole-fleet run) reads them back against the
  cloud: an instance found stopping or stopped is recorded as done (tagged when and
  why, as a normal stop would, and its stale lease tag removed), one still running as
  failed, one no longer listed in its scope as failed; each is reported. Intents of
  other policies and of scopes this run does not cover are left for their owner.
- One owner per intent: settling one takes the instance's claim in the ledger first
  (:func:`gpuplan.ledger.claims.claim_to_settle`, one conditional statement on SQLite
  and PostgreSQL alike), taken over from the dead run that wrote the intent, or from a
  settling run that died in turn (its run lock free) or whose claim expired. Of two
  runs settling at once (sharded or not, any shard counts) exactly one does it; the
  other reports the intent as being settled by another run (``skipped``, not a
  failure) and leaves the instance alone for the rest of its run. The claim is kept
  when steps were resumed (the cloud was asked to act), else given back.
- An action of several steps (:mod:`gpuplan.core.lifecycle.actions`, e.g. snapshot then stop)
  is resumed from its first step not done when that is safe (the instance still
  running and found idle by this run, and no preparing step cut short mid-call), else
  reported half done (failed, with each step's state); its last step found carried
  out (the instance stopping or stopped) counts as done. A step cut short by the kill
  is looked up by the label recorded before its call, and what it made (a snapshot's
  id) is recorded; the report names every id the action's steps made.
- The killed run itself is closed (status ``killed``, when, and by which run) by the
  run that settles its last intent, or by any later applied run of its policy when it
  left none (:func:`gpuplan.ledger.killed.close_killed_runs`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from gpuplan.core.errors import GpuplanError
from gpuplan.core.lifecycle.actions import StepState
from gpuplan.core.lifecycle.idle import REASON_TAG, STOPPED_AT_TAG, format_tag_time
from gpuplan.core.lifecycle.instances import RESTORING, Action, GpuInstance, InstanceState
from gpuplan.core.lifecycle.plan import DONE, Outcome
from gpuplan.ledger import (
    PENDING,
    InstanceKey,
    Ledger,
    LedgerError,
    PendingAction,
)
from gpuplan.ledger.claims import (
    claim_holder,
    claim_to_settle,
    release_instance,
)
from gpuplan.ledger.killed import close_killed_runs
from gpuplan.ledger.steps import StepRecord, action_steps, mark_step
from gpuplan.providers.base import CloudAdapter
from gpuplan.usecases.lifecycle.journal import CLAIM_MINUTES, LEASE_TAG, Journal
from gpuplan.usecases.lifecycle.steps import made_by, run_steps


@dataclass(frozen=True)
class Reconciled:
    """A killed run's intent, read back against the cloud."""

    instance: GpuInstance | None
    instance_id: str
    action: Action
    outcome: Outcome
    detail: str


@dataclass(frozen=True)
class Owner:
    """What an applied run covers: it settles only the intents it could have made."""

    run_id: int | None
    policy: str
    scopes: Collection[str]
    """The scope names of this run's adapters (its shard's part of the fleet)."""
    lock_name: str = ""
    shard: str = ""
    only: Collection[str] | None = None
    """The instances a narrowed run looks at (the TUI's single stop); None: all."""

    def made(self, p: PendingAction, listed: Collection[str]) -> bool:
        if p.policy != self.policy or (self.only is not None and p.instance_id not in self.only):
            return False
        if p.scope:
            return p.scope in self.scopes
        # A row older than the scope column: ours if we list it, or our own lock wrote it.
        return p.instance_id in listed or bool(self.lock_name and p.lock_name == self.lock_name)


def reconcile(
    ledger: Ledger | None,
    listed: Mapping[str, tuple[GpuInstance, CloudAdapter]],
    reason_code: str,
    now: datetime,
    owner: Owner,
    idle: Collection[str] = (),
) -> list[Reconciled]:
    """Settle the ``pending`` intents ``owner`` could have made from the instances listed
    this run, then close the killed runs left with none. ``idle``: the instances this
    run found idle, the only ones whose half-done composite action may be resumed."""
    if ledger is None:
        return []
    out: list[Reconciled] = []
    for pending in ledger.pending_actions(with_alive=True):
        if not owner.made(pending, listed):
            continue  # another policy's or another shard's: left for its owner
        action = Action(pending.action)
        if action in RESTORING:
            continue  # a schedule's start: settled by gpuplan schedule (usecases.schedule)
        found = listed.get(pending.instance_id)
        inst = None if found is None else found[0]
        key, busy = _claim(ledger, owner, pending, inst, now)
        if busy:
            out.append(Reconciled(inst, pending.instance_id, action, Outcome.SKIPPED, busy))
            continue
        if not _still_pending(ledger, pending.id):  # settled by another run meanwhile
            _release(ledger, owner, key)
            continue
        steps = action_steps(ledger, pending.id)
        called = False
        if steps:
            outcome, detail, called = _settle_steps(
                ledger, steps, found, pending, reason_code, now, pending.instance_id in idle
            )
        elif found is None:
            outcome, detail = Outcome.FAILED, "killed mid-call; the instance is no longer listed"
        else:
            outcome, detail = _settle_one(*found, action, pending.acted_at, reason_code)
        ledger.settle_action(pending.id, outcome.value, detail, now)
        if not called:  # nothing was asked of the cloud: no reason to keep others off
            _release(ledger, owner, key)
        out.append(Reconciled(inst, pending.instance_id, action, outcome, detail))
    if owner.run_id is not None:
        close_killed_runs(
            ledger,
            kind="stop-idle",
            policy=owner.policy,
            closer=owner.run_id,
            shard=owner.shard,
            at=now,
        )
    return out


def _claim(
    ledger: Ledger, owner: Owner, pending: PendingAction, inst: GpuInstance | None, now: datetime
) -> tuple[InstanceKey | None, str]:
    """Claim the instance of a killed run's intent before settling it: (the claim, "")
    when this run settles it, else (None, why it is left to the run settling it)."""
    account = inst.account if inst is not None else pending.account
    key = InstanceKey(pending.provider, account, pending.region, pending.instance_id)
    if pending.alive:  # its run's lock is held: that run, or one settling for it, acts
        holder = claim_holder(ledger, key)
        if holder is None or holder.run_id == pending.run_id:
            return None, (
                f"being settled by another gpuplan run (the one holding run {pending.run_id}'s"
                f" run lock {pending.lock_name!r}); left to that run"
            )
    elif owner.run_id is None:
        return None, ""
    else:
        until = now + timedelta(minutes=CLAIM_MINUTES)
        holder = claim_to_settle(
            ledger, owner.run_id, key, now, until, writer=pending.run_id, own_lock=owner.lock_name
        )
        if holder is None:
            return key, ""
    return None, (
        f"being settled by another gpuplan run (run {holder.run_id}, which claimed it at "
        f"{holder.claimed_at[:19]}Z); left to that run"
    )


def _still_pending(ledger: Ledger, action_id: int) -> bool:
    rows = ledger.select("SELECT outcome FROM actions WHERE id = ?", (action_id,))
    return bool(rows) and rows[0][0] == PENDING


def _release(ledger: Ledger, owner: Owner, key: InstanceKey | None) -> None:
    if key is not None and owner.run_id is not None:
        release_instance(ledger, owner.run_id, key)


def _settle_steps(
    ledger: Ledger,
    steps: Sequence[StepRecord],
    found: tuple[GpuInstance, CloudAdapter] | None,
    pending: PendingAction,
    reason_code: str,
    now: datetime,
    still_idle: bool,
) -> tuple[Outcome, str, bool]:
    """A killed composite action: resumed from its first step not done when that is safe
    (the instance still running and idle, no step cut short), else reported half done;
    the outcome, its detail (with the ids each step recorded) and whether the cloud was
    asked to act (steps resumed)."""
    outcome, detail, called = _settle_composite(
        ledger, steps, found, pending, reason_code, now, still_idle
    )
    return outcome, detail + recorded_ids(action_steps(ledger, pending.id)), called


def recorded_ids(steps: Sequence[StepRecord]) -> str:
    """``; snapshot snap-1`` for each id a step made (recorded), "" when none."""
    return "".join(f"; {s.call.value} {one}" for s in steps for one in s.made)


def _settle_composite(
    ledger: Ledger,
    steps: Sequence[StepRecord],
    found: tuple[GpuInstance, CloudAdapter] | None,
    pending: PendingAction,
    reason_code: str,
    now: datetime,
    still_idle: bool,
) -> tuple[Outcome, str, bool]:
    had = ", ".join(f"{s.call.value} {s.state.value}" for s in steps)
    half = f"half done when its run was killed ({had})"
    left = [s for s in steps if s.state is not StepState.DONE]
    if found is None:
        _give_up(ledger, left, "the instance is no longer listed", now)
        return Outcome.FAILED, f"{half}; the instance is no longer listed", False
    inst, adapter = found
    action = Action(pending.action)
    last_in_flight = [s.state for s in left] == [StepState.PENDING] and left[0] is steps[-1]
    if inst.state is InstanceState.RUNNING:
        why = _not_resumable(left, still_idle)
    elif last_in_flight and inst.state is not InstanceState.PENDING:
        # Only the last call, which changes the state, was in flight: the cloud took it.
        mark_step(ledger, left[0].id, StepState.DONE, f"found {inst.state.value}", now)
        return (*_settle_one(inst, adapter, action, pending.acted_at, reason_code), False)
    else:
        why = f"found {inst.state.value}"
    if why:
        _give_up(ledger, left, why, now, found)
        return Outcome.FAILED, f"{half}; not resumed: {why}" + _drop_lease(inst, adapter), False
    try:
        run_steps(adapter, inst, [(s.id, s.call) for s in left], Journal(ledger).step, now)
        inst = adapter.refresh(inst)
    except LedgerError:
        raise
    except GpuplanError as exc:
        lease = _drop_lease(inst, adapter)
        return Outcome.FAILED, f"{half}; resuming failed: {exc.message}" + lease, True
    said = f"resumed after a killed run ({had})"
    return (*_settle_one(inst, adapter, action, pending.acted_at, reason_code, said), True)


def _not_resumable(left: Sequence[StepRecord], still_idle: bool) -> str:
    """Why a killed composite action's remaining steps are not run, or "" when safe."""
    for s in left:
        if s.state is StepState.FAILED:
            return f"its {s.call.value} step failed"
        if s.state is StepState.PENDING and s.call.action is None:
            return f"its {s.call.value} step was cut short (killed mid-call)"
    return "" if still_idle else "the instance is no longer idle"


def _give_up(
    ledger: Ledger,
    left: Sequence[StepRecord],
    why: str,
    now: datetime,
    found: tuple[GpuInstance, CloudAdapter] | None = None,
) -> None:
    """Close the steps of an action that is not resumed: none is left planned or pending.
    A step cut short is looked up by its label, and what it made is recorded."""
    for s in left:
        if s.state is StepState.PENDING:
            made, note = _made_by(found, s) if found is not None else ([], "")
            detail = f"killed mid-call; {why}{note}"
            mark_step(ledger, s.id, StepState.INTERRUPTED, detail, now, made=made)
        elif s.state is StepState.PLANNED:
            mark_step(ledger, s.id, StepState.NOT_DONE, f"not resumed: {why}", now)


def _made_by(found: tuple[GpuInstance, CloudAdapter], step: StepRecord) -> tuple[list[str], str]:
    """What a step cut short made, found by its label; and a note when it could not be
    looked up."""
    inst, adapter = found
    try:
        return made_by(adapter, inst, step.call, step.label), ""
    except GpuplanError as exc:
        return [], f"; looking up what it made failed: {exc.message}"


def _settle_one(
    inst: GpuInstance,
    adapter: CloudAdapter,
    action: Action,
    acted_at: datetime,
    reason_code: str,
    said: str = "reconciled after a killed run",
) -> tuple[Outcome, str]:
    lease = _drop_lease(inst, adapter)
    if inst.state in (InstanceState.RUNNING, InstanceState.PENDING):
        return Outcome.FAILED, "killed mid-call; the instance is still running" + lease
    # Stopping counts as done: the cloud accepted the call and finishes it on its own.
    detail = f"{said}: found {inst.state.value}" + lease
    if STOPPED_AT_TAG not in inst.labels:
        try:
            adapter.tag(inst, {STOPPED_AT_TAG: format_tag_time(acted_at), REASON_TAG: reason_code})
        except GpuplanError as exc:
            detail += f"; tagging failed: {exc.message}"
    return DONE.get(action, Outcome.STOPPED), detail


def _drop_lease(inst: GpuInstance, adapter: CloudAdapter) -> str:
    """Remove the killed run's lease tag; a note for the detail when that failed."""
    if LEASE_TAG not in inst.labels:
        return ""
    try:
        adapter.untag(inst, (LEASE_TAG,))
    except GpuplanError as exc:
        return f"; removing the stale {LEASE_TAG} tag failed: {exc.message}"
    return ""
