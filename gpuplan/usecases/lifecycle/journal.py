"""Record before acting: the run's journal in the ledger, and its claims on instances.

Promises (docs/lifecycle.md, "Guarantees"):
- The run and every decision are committed before any cloud call; a ledger that
  cannot be written raises :class:`~gpuplan.ledger.LedgerError` there, so the run
  acts on nothing.
- Each action is an intent (outcome ``pending``) committed before its cloud call, and
  its outcome committed right after. A write that fails after a call stops the run:
  nothing more is acted on, and the error is one line.
- An action of several steps (:mod:`gpuplan.core.lifecycle.actions`, e.g. snapshot then stop)
  also records each step (:mod:`gpuplan.ledger.steps`): committed ``pending`` with
  its label before its call, and settled with what it made (a snapshot's id) before
  the next call. What a killed run left is settled by the next run
  (:mod:`gpuplan.usecases.lifecycle.reconcile`).
- Before any call that changes an instance (the lease tag, the action) the run claims
  it in the ledger (:meth:`Journal.claim`); an instance another run claimed less than
  ``CLAIM_MINUTES`` before is left alone with the reason, so two overlapping runs
  (shards sharing a ledger) never both act on it. A claim is given back when the run
  then leaves the instance alone (skipped), and kept after a cloud call, whatever came
  of it: the cloud's answer may not be visible to the other run yet.
- With no ledger (library use, tests) the journal records nothing and never refuses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from gpuplan.core.lifecycle.actions import Call, StepState
from gpuplan.core.lifecycle.instances import Action, GpuInstance
from gpuplan.core.lifecycle.plan import Outcome, PlannedAction
from gpuplan.ledger import (
    PENDING,
    ActionRecord,
    DecisionRecord,
    InstanceKey,
    Ledger,
)
from gpuplan.ledger.claims import (
    claim_instance,
    release_instance,
)
from gpuplan.ledger.steps import mark_step, record_steps

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

    def step(
        self,
        step_id: int | None,
        state: StepState,
        detail: str,
        now: datetime,
        *,
        label: str = "",
        made: Sequence[str] = (),
    ) -> None:
        """One step's state, committed (before its call: ``pending`` with its label;
        after: the result, with what it made)."""
        if self.ledger is not None and step_id is not None:
            mark_step(self.ledger, step_id, state, detail, now, label=label, made=made)

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
