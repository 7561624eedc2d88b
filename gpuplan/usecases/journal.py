"""Record before acting: the run's journal in the ledger, and reconciling killed runs.

Promises (docs/lifecycle.md, "Guarantees"):
- The run and every decision are committed before any cloud call; a ledger that
  cannot be written raises :class:`~gpuplan.ledger.LedgerError` there, so the run
  acts on nothing.
- Each action is an intent (outcome ``pending``) committed before its cloud call, and
  its outcome committed right after. A write that fails after a call stops the run:
  nothing more is acted on, and the error is one line.
- A run killed between intent and outcome leaves ``pending`` rows, each with the scope
  it was written in. The next applied run of the same policy whose scopes include that
  scope (the killed shard's next run, or a whole-fleet run) reads them back against the
  cloud: an instance found stopping or stopped is recorded as done (tagged when and
  why, as a normal stop would, and its stale lease tag removed), one still running as
  failed, one no longer listed in its scope as failed; each is reported. Intents of
  other policies and of scopes this run does not cover are left for their owner.
- An action of several steps (:mod:`gpuplan.core.actions`, e.g. snapshot then stop)
  also records each step (:mod:`gpuplan.ledger.steps`): committed ``pending`` before
  its call and settled after. A killed one is resumed from its first step not done
  when that is safe (the instance still running and found idle by this run, and no
  preparing step cut short mid-call), else reported half done (failed, with each step's
  state); its last step found carried out (the instance stopping or stopped) counts as
  done, as for a one-step action.
- The killed run itself is closed (status ``killed``, when, and by which run) by the
  run that settles its last intent, or by any later applied run of its policy when it
  left none (:func:`gpuplan.ledger.killed.close_killed_runs`).
- Before any call that changes an instance (the lease tag, the action) the run claims
  it in the ledger (:meth:`Journal.claim`); an instance another run claimed less than
  ``CLAIM_MINUTES`` before is left alone with the reason, so two overlapping runs
  (shards sharing a ledger) never both act on it. A claim is given back when the run
  then leaves the instance alone (skipped), and kept after a cloud call, whatever came
  of it: the cloud's answer may not be visible to the other run yet.
- With no ledger (library use, tests) the journal records nothing and never refuses.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from gpuplan.core.actions import Call, StepState
from gpuplan.core.errors import GpuplanError
from gpuplan.core.idle import REASON_TAG, STOPPED_AT_TAG, format_tag_time
from gpuplan.core.instances import Action, GpuInstance, InstanceState
from gpuplan.core.lifecycle import DONE, Outcome, PlannedAction
from gpuplan.ledger import (
    PENDING,
    ActionRecord,
    DecisionRecord,
    InstanceKey,
    Ledger,
    LedgerError,
    PendingAction,
)
from gpuplan.ledger.claims import claim_instance, release_instance
from gpuplan.ledger.killed import close_killed_runs
from gpuplan.ledger.steps import StepRecord, action_steps, mark_step, record_steps
from gpuplan.providers.base import CloudAdapter
from gpuplan.usecases.steps import run_steps

CLAIM_MINUTES = 15
"""How long a claim keeps other runs off an instance (as long as the lease tag)."""
LEASE_TAG = "gpuplan-acting"
"""The tag a run writes on an instance while it acts on it (:mod:`.executor`)."""


@dataclass
class Journal:
    """One run's rows in the ledger (or nothing, when ``ledger`` is None)."""

    ledger: Ledger | None
    run_id: int | None = None
    decision_ids: dict[str, int] = field(default_factory=dict)
    claimed: dict[str, InstanceKey] = field(default_factory=dict)
    """Instance id -> the claim this run holds on it."""
    scopes: Mapping[str, str] = field(default_factory=dict)
    """Instance id -> the scope (adapter) it was listed in, recorded with each action."""

    def open(
        self,
        kind: str,
        policy: str,
        now: datetime,
        dry_run: bool,
        items: Sequence[PlannedAction],
        window_minutes: int = 60,
    ) -> None:
        """The run and its decisions, committed together before anything is done."""
        if self.ledger is None:
            return
        with self.ledger.transaction():
            self.run_id = self.ledger.start_run(
                kind, policy, now, dry_run=dry_run, window_minutes=window_minutes
            )
            for item in items:
                self.decision_ids[item.instance.instance_id] = self.ledger.record_decision(
                    self.run_id, decision_record(item, now)
                )

    def claim(self, inst: GpuInstance, now: datetime) -> str | None:
        """Claim ``inst`` for this run; None when this run holds it now, else why it is
        left alone (another run's claim has not expired)."""
        if self.ledger is None or self.run_id is None:
            return None
        key = InstanceKey(inst.provider.value, inst.account, inst.region, inst.instance_id)
        until = now + timedelta(minutes=CLAIM_MINUTES)
        holder = claim_instance(self.ledger, self.run_id, key, now, until)
        if holder is None:
            self.claimed[inst.instance_id] = key
            return None
        return (
            f"another gpuplan run (run {holder.run_id}) claimed it in the ledger at "
            f"{holder.claimed_at[:19]}Z until {holder.expires_at[:19]}Z; left alone"
        )

    def intent(self, item: PlannedAction, now: datetime) -> int | None:
        """The planned call, committed before the cloud is asked."""
        return self._write(item, item.do, PENDING, item.note, now)

    def intent_steps(
        self, item: PlannedAction, now: datetime, calls: Sequence[Call]
    ) -> tuple[int | None, list[int | None]]:
        """A composite action's intent and one ``planned`` row per step, committed
        together before the first call; the ids (None without a ledger)."""
        if self.ledger is None or self.run_id is None:
            return None, [None] * len(calls)
        with self.ledger.transaction():
            intent = self.intent(item, now)
            assert intent is not None  # a ledger and a run: the row was written
            ids: list[int | None] = [*record_steps(self.ledger, intent, calls, now)]
            return intent, ids

    def step(self, step_id: int | None, state: StepState, detail: str, now: datetime) -> None:
        """One step's state, committed (before its call: ``pending``; after: the result)."""
        if self.ledger is not None and step_id is not None:
            mark_step(self.ledger, step_id, state, detail, now)

    def settle(self, intent: int | None, outcome: Outcome, detail: str, now: datetime) -> None:
        if self.ledger is not None and intent is not None:
            self.ledger.settle_action(intent, outcome.value, detail, now)

    def record(self, item: PlannedAction, outcome: Outcome, detail: str, now: datetime) -> None:
        """An outcome with no cloud call of its own (skipped, notified, failed re-check)."""
        self._write(item, item.planned_action, outcome.value, detail, now)
        key = self.claimed.pop(item.instance.instance_id, None)
        if outcome is Outcome.SKIPPED and key is not None and self.ledger is not None:
            release_instance(self.ledger, self.run_id or 0, key)

    def _write(
        self, item: PlannedAction, action: Action, outcome: str, detail: str, now: datetime
    ) -> int | None:
        if self.ledger is None or self.run_id is None:
            return None
        inst = item.instance
        return self.ledger.record_action(
            self.run_id,
            ActionRecord(
                provider=inst.provider.value,
                region=inst.region,
                instance_id=inst.instance_id,
                action=action.value,
                outcome=outcome,
                acted_at=now,
                detail=detail,
                decision_id=self.decision_ids.get(inst.instance_id),
                scope=self.scopes.get(inst.instance_id, ""),
            ),
        )


def decision_record(item: PlannedAction, now: datetime) -> DecisionRecord:
    inst, d = item.instance, item.decision
    return DecisionRecord(
        provider=inst.provider.value,
        region=inst.region,
        instance_id=inst.instance_id,
        instance_type=inst.instance_type,
        state=inst.state.value,
        verdict=d.verdict.value,
        reason=d.reason,
        planned_action=item.planned_action.value,
        decided_at=now,
        account=inst.account,
        zone=inst.zone,
        hourly_usd=inst.hourly_usd,
        labels=inst.labels,
        gpu_count=inst.gpu_count,
    )


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
    for pending in ledger.pending_actions():
        if not owner.made(pending, listed):
            continue  # another policy's or another shard's: left for its owner
        action = Action(pending.action)
        found = listed.get(pending.instance_id)
        steps = action_steps(ledger, pending.id)
        if steps:
            outcome, detail = _settle_steps(
                ledger, steps, found, pending, reason_code, now, pending.instance_id in idle
            )
        elif found is None:
            outcome, detail = Outcome.FAILED, "killed mid-call; the instance is no longer listed"
        else:
            outcome, detail = _settle_one(*found, action, pending.acted_at, reason_code)
        ledger.settle_action(pending.id, outcome.value, detail, now)
        inst = None if found is None else found[0]
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


def _settle_steps(
    ledger: Ledger,
    steps: Sequence[StepRecord],
    found: tuple[GpuInstance, CloudAdapter] | None,
    pending: PendingAction,
    reason_code: str,
    now: datetime,
    still_idle: bool,
) -> tuple[Outcome, str]:
    """A killed composite action: resumed from its first step not done when that is safe
    (the instance still running and idle, no step cut short), else reported half done."""
    had = ", ".join(f"{s.call.value} {s.state.value}" for s in steps)
    half = f"half done when its run was killed ({had})"
    left = [s for s in steps if s.state is not StepState.DONE]
    if found is None:
        _give_up(ledger, left, "the instance is no longer listed", now)
        return Outcome.FAILED, f"{half}; the instance is no longer listed"
    inst, adapter = found
    action = Action(pending.action)
    last_in_flight = [s.state for s in left] == [StepState.PENDING] and left[0] is steps[-1]
    if inst.state is InstanceState.RUNNING:
        why = _not_resumable(left, still_idle)
    elif last_in_flight and inst.state is not InstanceState.PENDING:
        # Only the last call, which changes the state, was in flight: the cloud took it.
        mark_step(ledger, left[0].id, StepState.DONE, f"found {inst.state.value}", now)
        return _settle_one(inst, adapter, action, pending.acted_at, reason_code)
    else:
        why = f"found {inst.state.value}"
    if why:
        _give_up(ledger, left, why, now)
        return Outcome.FAILED, f"{half}; not resumed: {why}" + _drop_lease(inst, adapter)
    try:
        run_steps(adapter, inst, [(s.id, s.call) for s in left], Journal(ledger).step, now)
        inst = adapter.refresh(inst)
    except LedgerError:
        raise
    except GpuplanError as exc:
        return Outcome.FAILED, f"{half}; resuming failed: {exc.message}" + _drop_lease(
            inst, adapter
        )
    said = f"resumed after a killed run ({had})"
    return _settle_one(inst, adapter, action, pending.acted_at, reason_code, said)


def _not_resumable(left: Sequence[StepRecord], still_idle: bool) -> str:
    """Why a killed composite action's remaining steps are not run, or "" when safe."""
    for s in left:
        if s.state is StepState.FAILED:
            return f"its {s.call.value} step failed"
        if s.state is StepState.PENDING and s.call.action is None:
            return f"its {s.call.value} step was cut short (killed mid-call)"
    return "" if still_idle else "the instance is no longer idle"


def _give_up(ledger: Ledger, left: Sequence[StepRecord], why: str, now: datetime) -> None:
    """Close the steps of an action that is not resumed: none is left planned or pending."""
    for s in left:
        if s.state is StepState.PENDING:
            mark_step(ledger, s.id, StepState.INTERRUPTED, f"killed mid-call; {why}", now)
        elif s.state is StepState.PLANNED:
            mark_step(ledger, s.id, StepState.NOT_DONE, f"not resumed: {why}", now)


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
