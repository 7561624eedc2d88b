"""The executor of an applied ``stop-idle`` plan: re-check, lease, record, act, record.

Per scope, for the instances the plan would act on:
1. fetch the latest utilisation (one batch), *then* re-read each instance's state and
   tags, so a keep tag added while the metrics were being read is honoured; with
   ``--concurrency`` above 1 the scopes' utilisation batches are fetched concurrently
   (read-only), while the re-read, lease, call and records below stay on the calling
   thread, one instance after the other, in the plan's order;
2. a re-check that cannot be made (throttled, failed metrics) leaves the instance
   alone as ``failed``, named, and the run exits 1;
3. claim the instance in the ledger (:meth:`Journal.claim`: a run that overlaps this
   one, e.g. a shard set up to overlap, has not claimed it), then
   lease: write ``gpuplan-acting=<run token>-<expiry>`` on the instance and read it
   back; another unexpired lease, or a lease that is not ours on read-back, means a
   second scheduler is acting on this fleet: the instance is left alone and the run
   reports it;
4. the intent is committed to the ledger, the cloud is called, the outcome is
   committed; an action of several steps (:mod:`gpuplan.core.lifecycle.actions`: e.g. snapshot
   then stop) commits each step before its call and after it
   (:mod:`gpuplan.usecases.lifecycle.steps`), so a kill between steps is resumed or reported by
   the next run; a stop request (SIGTERM, Ctrl-C) lets the call in flight finish and
   leaves every later instance alone.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from gpuplan.core.errors import GpuplanError
from gpuplan.core.lifecycle.actions import ACTIONS, ActionTable, Call
from gpuplan.core.lifecycle.idle import (
    IdleRule,
    IdleVerdict,
    format_tag_time,
    parse_tag_time,
    window_bounds,
)
from gpuplan.core.lifecycle.instances import Action, GpuInstance, HostSamples, InstanceState
from gpuplan.core.lifecycle.plan import DONE, Outcome, PlannedAction, Step
from gpuplan.ledger import LedgerError
from gpuplan.providers.base import CloudAdapter
from gpuplan.usecases.lifecycle.concurrency import SERIAL, Concurrency
from gpuplan.usecases.lifecycle.journal import LEASE_TAG, Journal
from gpuplan.usecases.lifecycle.steps import calls_for, run_steps
from gpuplan.usecases.lifecycle.survey import decide_one, fetch_samples

LEASE_MINUTES = 15

Recheck = Callable[[GpuInstance, PlannedAction], str | None]
"""Why the re-read instance is no longer due for its planned action (None: act)."""


@dataclass
class InstanceResult:
    """One instance in a run: the plan for it, its outcome, and why."""

    item: PlannedAction
    outcome: Outcome = Outcome.NONE
    detail: str = ""


@dataclass
class Executor:
    """Carries out one run's plan; collects the lines the run must report."""

    journal: Journal
    rule: IdleRule
    now: datetime
    should_stop: Callable[[], bool] = lambda: False
    concurrency: Concurrency = SERIAL
    actions: ActionTable = field(default_factory=lambda: ACTIONS)
    """Per cloud, the steps of each action (:mod:`gpuplan.core.lifecycle.actions`)."""
    settling: Mapping[str, str] = field(default_factory=dict)
    """Instance id -> why it is left alone: another run is settling a killed run's
    intent on it (:func:`gpuplan.usecases.lifecycle.reconcile.reconcile`); not a problem."""
    recheck: Recheck | None = None
    """The re-check of a run that does not act on idleness (``gpuplan schedule``): asked
    with the re-read instance instead of the state-and-idle re-check; no metrics re-read."""
    lifetime_check: Callable[[GpuInstance, PlannedAction], str | None] | None = None
    """Re-checks a lifetime rule's action on the re-read instance (:mod:`gpuplan.usecases.
    lifetimes`): None while it is still due, else why it is left alone."""
    token: str = field(default_factory=lambda: secrets.token_hex(6))
    problems: list[str] = field(default_factory=list)
    interrupted: bool = False

    @property
    def lease(self) -> str:
        expiry = self.now + timedelta(minutes=LEASE_MINUTES)
        return f"{self.token}-{format_tag_time(expiry)}"

    def run(self, results: list[InstanceResult], by_id: dict[str, CloudAdapter]) -> None:
        for o in results:
            step = o.item.step
            if step is Step.SKIP:
                self._settle(o, Outcome.SKIPPED, o.item.note)
            elif step is Step.DEFER:
                self._settle(o, Outcome.DEFERRED, o.item.note)
            elif step in (Step.MARK, Step.NOTIFY, Step.CLEAR):
                self._tag_step(by_id[o.item.instance.instance_id], o)
        acting = [o for o in results if o.item.step is Step.ACT]
        scopes = [
            (adapter, [o for o in acting if by_id[o.item.instance.instance_id] is adapter])
            for adapter in dict.fromkeys(by_id[o.item.instance.instance_id] for o in acting)
        ]
        # Read-only re-check batches may run ahead on workers; everything that acts or
        # records happens here, on this thread, scope after scope (serial: on demand).
        with self.concurrency.ordered(self._fresh_samples, scopes) as fresh:
            for (adapter, mine), (samples, failure) in zip(scopes, fresh, strict=True):
                self._scope(adapter, mine, samples, failure)
        failed = [o.item.instance.instance_id for o in acting if o.outcome is Outcome.FAILED]
        if failed:
            self.problems.append("left alone after a failed re-check or call: " + ", ".join(failed))

    def _settle(self, o: InstanceResult, outcome: Outcome, detail: str) -> None:
        o.outcome, o.detail = outcome, detail
        self.journal.record(o.item, outcome, detail, self.now)

    def _tag_step(self, adapter: CloudAdapter, o: InstanceResult) -> None:
        item = o.item
        try:
            if item.tags:
                adapter.tag(item.instance, item.tags)
            if item.untag:
                adapter.untag(item.instance, item.untag)
        except GpuplanError as exc:
            self._settle(o, Outcome.FAILED, exc.message)
            return
        if item.step is Step.CLEAR:
            o.detail = item.note  # a withdrawn notice: nothing done to the instance
        else:
            self._settle(o, Outcome.NOTIFIED, item.note)

    def _fresh_samples(
        self, scope: tuple[CloudAdapter, list[InstanceResult]]
    ) -> tuple[Mapping[str, HostSamples], str]:
        """The scope's latest utilisation (one batch): the re-check's read, no record."""
        adapter, results = scope
        if self.recheck is not None:
            return {}, ""  # the run's own re-check reads no metrics
        if self.should_stop():
            return {}, "run interrupted before the re-check"
        start, end = window_bounds(self.rule, self.now)
        planned = [o.item.instance for o in results]
        return fetch_samples(adapter, planned, start, end, self.rule, self.concurrency)

    def _scope(
        self,
        adapter: CloudAdapter,
        results: list[InstanceResult],
        samples: Mapping[str, HostSamples],
        failure: str,
    ) -> None:
        for o in results:
            if self.should_stop():
                self.interrupted = True
                self._settle(o, Outcome.SKIPPED, "run interrupted: left alone")
                continue
            busy = self.settling.get(o.item.instance.instance_id)
            if busy:
                self._settle(o, Outcome.SKIPPED, busy)
                continue
            if failure and not o.item.lifetime:  # a lifetime rule reads no metric
                self._settle(o, Outcome.FAILED, f"re-check failed, left alone: {failure}")
                continue
            try:
                inst = adapter.refresh(o.item.instance)  # tags read after the metrics
            except GpuplanError as exc:
                self._settle(o, Outcome.FAILED, f"re-read before acting failed: {exc.message}")
                continue
            self._recheck_and_act(adapter, inst, o, samples)

    def _recheck_and_act(
        self,
        adapter: CloudAdapter,
        inst: GpuInstance,
        o: InstanceResult,
        samples: Mapping[str, HostSamples],
    ) -> None:
        why = self._not_due(inst, o, samples)
        if why is not None:
            self._settle(o, Outcome.SKIPPED, why)
            return
        self._claim_and_act(adapter, inst, o)

    def _claim_and_act(self, adapter: CloudAdapter, inst: GpuInstance, o: InstanceResult) -> None:
        held = self.journal.claim(inst, self.now) or self._take_lease(adapter, inst)
        if held is None:
            return self._act(adapter, inst, o)
        self.problems.append(f"{inst.instance_id}: {held}; is a second scheduler running?")
        self._settle(o, Outcome.SKIPPED, held)

    def _not_due(
        self, inst: GpuInstance, o: InstanceResult, samples: Mapping[str, HostSamples]
    ) -> str | None:
        """Why the re-read instance is left alone after all (None: act)."""
        if self.recheck is not None:
            return self.recheck(inst, o.item)
        if o.item.lifetime:  # a lifetime rule reads no metric: its own re-check
            why = self.lifetime_check(inst, o.item) if self.lifetime_check else "no re-check"
            return None if why is None else f"re-checked before acting: {why}"
        if inst.state is not InstanceState.RUNNING:
            return f"state changed to {inst.state.value} since the plan"
        again = decide_one(inst, samples, self.rule, self.now)
        if again.verdict is not IdleVerdict.IDLE:
            return f"no longer idle: {again.reason}"
        return None

    def _take_lease(self, adapter: CloudAdapter, inst: GpuInstance) -> str | None:
        """None when this run holds the lease now; else why the instance is left alone."""
        theirs = inst.labels.get(LEASE_TAG)
        if theirs and not _expired(theirs, self.now):
            return f"another gpuplan run holds the lease ({LEASE_TAG}={theirs})"
        ours = self.lease
        try:
            adapter.tag(inst, {LEASE_TAG: ours})
            back = adapter.refresh(inst).labels.get(LEASE_TAG)
        except GpuplanError as exc:
            return f"lease not taken, left alone: {exc.message}"
        if back != ours:
            return f"another gpuplan run took the lease ({LEASE_TAG}={back})"
        return None

    def _act(self, adapter: CloudAdapter, inst: GpuInstance, o: InstanceResult) -> None:
        item = o.item
        calls = calls_for(inst, item.planned_action, item.do, self.actions)
        if item.snapshot_first and Call.SNAPSHOT not in calls:
            calls = (Call.SNAPSHOT, *calls)  # stopped_for: the disks kept before terminate
        ids: list[int | None] = []
        if len(calls) == 1:  # one step: the action's own row is its record
            intent = self.journal.intent(item, self.now)
        else:
            intent, ids = self.journal.intent_steps(item, self.now, calls)
        try:
            if len(calls) == 1:
                adapter.act(inst, item.do)
            else:
                run_steps(
                    adapter, inst, [*zip(ids, calls, strict=True)], self.journal.step, self.now
                )
        except LedgerError:
            raise  # a record that cannot be written stops the run
        except GpuplanError as exc:
            o.outcome, o.detail = Outcome.FAILED, exc.message
            self.journal.settle(intent, o.outcome, o.detail, self.now)
            return
        o.outcome, o.detail = DONE[item.do], item.note
        leased = inst.model_copy(update={"labels": {**inst.labels, LEASE_TAG: self.lease}})
        try:
            if item.tags:
                adapter.tag(leased, item.tags)
            if item.do is not Action.TERMINATE:  # a deleted instance has no tags to clear
                adapter.untag(leased, (*item.untag, LEASE_TAG))
        except GpuplanError as exc:
            o.detail = f"{item.note}; tagging failed: {exc.message}".lstrip("; ")
        self.journal.settle(intent, o.outcome, o.detail, self.now)


def _expired(lease: str, now: datetime) -> bool:
    expiry = parse_tag_time(lease.rsplit("-", 1)[-1])
    return expiry is None or expiry <= now
