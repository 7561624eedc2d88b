"""``gpuplan schedule``: at off-hours stop what the policy's schedules cover; at on-hours
start again only what this job stopped itself.

A run is the same journey as ``stop-idle`` (:mod:`gpuplan.usecases.lifecycle.stop_idle`), with the
clock instead of idleness deciding: survey every scope (listing, and utilisation so that
each decision says whether the instance was busy); read this policy's earlier schedule
runs from the ledger (:mod:`gpuplan.ledger.schedule_marks`); plan
(:mod:`gpuplan.core.lifecycle.schedule_plan`: the idle action's data-loss guard, notice and cap,
a breaker on busy instances); record the run and every decision (kind ``schedule``);
then, with ``apply``, the executor re-reads each instance, re-checks it (still running
in off-hours and not exempt; still stopped for a start), claims and leases it, records
the intent, calls the cloud and records the outcome. Dry run by default. Without a
ledger nothing is started (what the job stopped is known only from the ledger).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from gpuplan.core.lifecycle.actions import ACTIONS, ActionTable
from gpuplan.core.lifecycle.instances import Action, GpuInstance, InstanceState
from gpuplan.core.lifecycle.plan import Outcome, PlannedAction
from gpuplan.core.lifecycle.schedule_plan import (
    STOPPED_STATES,
    Mark,
    Move,
    Row,
    decide,
    plan_schedule,
)
from gpuplan.core.policy import Policy
from gpuplan.ledger import Ledger
from gpuplan.ledger.schedule_marks import KIND, schedule_marks
from gpuplan.providers.base import CloudAdapter
from gpuplan.providers.webhook import Notifier
from gpuplan.usecases.lifecycle.concurrency import SERIAL, Concurrency
from gpuplan.usecases.lifecycle.executor import Executor
from gpuplan.usecases.lifecycle.reconcile import Owner, Reconciled, reconcile
from gpuplan.usecases.lifecycle.stop_idle import (
    StopIdleResult,
    finish,
    message,
    not_acted,
    open_run,
    platform_preview,
)
from gpuplan.usecases.lifecycle.survey import Survey, action_rule, decide_one, idle_rule, survey

HISTORY_DAYS = 45
"""How far back the ledger is read for what the schedule stopped (a long holiday and more)."""


def run_schedule(
    policy: Policy,
    providers: Sequence[CloudAdapter],
    *,
    apply: bool,
    now: datetime,
    ledger: Ledger | None = None,
    notifier: Notifier | None = None,
    problems: Sequence[str] = (),
    should_stop: Callable[[], bool] = lambda: False,
    concurrency: Concurrency = SERIAL,
    on_scope: Callable[[CloudAdapter, Survey], None] | None = None,
    actions: ActionTable = ACTIONS,
) -> StopIdleResult:
    """One scheduled run (see the module docstring); the result reads like stop-idle's."""
    rule = idle_rule(policy)
    seen = survey(providers, rule, now, concurrency=concurrency, on_scope=on_scope)
    marks: dict[str, list[Mark]] = {}
    damaged: list[str] = []
    if ledger is not None:
        marks, damaged = schedule_marks(ledger, policy.name, now - timedelta(days=HISTORY_DAYS))
    rows = [
        Row(
            s.instance,
            s.decision,
            s.adapter.capabilities,
            decide(
                s.instance,
                s.decision,
                policy.schedules,
                marks.get(s.instance.instance_id, ()),
                now,
                start_states(s.adapter),
            ),
        )
        for s in seen.seen
    ]
    planned = plan_schedule(rows, lambda provider: action_rule(policy, provider), now)
    result, journal, by_id = open_run(
        KIND, policy, seen, planned, rule, apply=apply, now=now, ledger=ledger,
        problems=problems, notices=[*seen.notices, *damaged],
    )  # fmt: skip
    if apply:
        listed = {s.instance.instance_id: s.instance for s in seen.seen}
        result.reconciled = settle_starts(ledger, listed, policy.name, set(seen.listed), now)
        owner = Owner(
            journal.run_id, policy.name, set(seen.listed),
            ledger.lock_name if ledger else "", ledger.shard if ledger else "",
        )  # fmt: skip
        both = {s.instance.instance_id: (s.instance, s.adapter) for s in seen.seen}
        # A killed run's stop intents are settled as every stop is (idle: none resumed).
        result.reconciled += reconcile(ledger, both, "offhours", now, owner)
    if apply and planned.aborted is None:
        startable = {iid: start_states(a) for iid, a in by_id.items()}
        recheck = _recheck(policy, marks, now, startable)
        executor = Executor(journal, rule, now, should_stop, concurrency, actions, recheck=recheck)
        executor.run(result.outcomes, by_id)
        result.problems.extend(executor.problems)
        result.interrupted = executor.interrupted
    else:
        if planned.aborted is None:
            platform_preview(result.outcomes, by_id)  # the platform's own dry run (dryRun=All)
        not_acted(result, journal, apply, now)
    finish(result, ledger, notifier if apply else None, now, schedule_message)
    return result


def settle_starts(
    ledger: Ledger | None,
    listed: dict[str, GpuInstance],
    policy: str,
    scopes: set[str],
    now: datetime,
) -> list[Reconciled]:
    """A killed schedule run's start intents of this policy, read back against what this
    run listed: running (or pending) is started, anything else failed (the next on-hours
    run starts it again when the ledger still says the schedule stopped it). Stop intents
    are settled as every stop is (:func:`gpuplan.usecases.lifecycle.reconcile.reconcile`)."""
    if ledger is None:
        return []
    out: list[Reconciled] = []
    for pending in ledger.pending_actions(with_alive=True):
        mine = pending.policy == policy and (not pending.scope or pending.scope in scopes)
        if pending.action != Action.START.value or not mine or pending.alive:
            continue
        inst = listed.get(pending.instance_id)
        if inst is not None and inst.state in (InstanceState.RUNNING, InstanceState.PENDING):
            outcome, detail = Outcome.STARTED, f"reconciled after a killed run: {inst.state.value}"
        else:
            seen = "not listed" if inst is None else inst.state.value
            outcome, detail = Outcome.FAILED, f"killed mid-call; the instance is {seen}"
        ledger.settle_action(pending.id, outcome.value, detail, now)
        out.append(Reconciled(inst, pending.instance_id, Action.START, outcome, detail))
    return out


def start_states(adapter: CloudAdapter) -> frozenset[InstanceState]:
    """The states ``adapter``'s start brings back (a Kubernetes suspended Job too)."""
    found = getattr(adapter, "start_states", None)
    return frozenset(found) if isinstance(found, frozenset) else STOPPED_STATES


def _recheck(
    policy: Policy,
    marks: dict[str, list[Mark]],
    now: datetime,
    startable: Mapping[str, frozenset[InstanceState]],
) -> Callable[[GpuInstance, PlannedAction], str | None]:
    """The executor's re-check: the re-read instance (state, tags) is still due."""
    rule = idle_rule(policy)

    def recheck(inst: GpuInstance, item: PlannedAction) -> str | None:
        starting = item.do is Action.START
        states = startable.get(inst.instance_id, STOPPED_STATES)
        if starting and inst.state not in states:
            return f"state changed to {inst.state.value} since the plan"
        if not starting and inst.state is not InstanceState.RUNNING:
            return f"state changed to {inst.state.value} since the plan"
        verdict = decide_one(inst, {}, rule, now)
        again = decide(
            inst, verdict, policy.schedules, marks.get(inst.instance_id, ()), now, states
        )
        wanted = Move.START if starting else Move.STOP
        if again.move is not wanted:
            return f"no longer due: {again.reason}"
        return None

    return recheck


def schedule_message(result: StopIdleResult) -> str:
    """The webhook text: what was stopped, started, skipped or failed, and why."""
    # Unknown metrics are stop-idle's concern: a schedule acts on the clock.
    acted = [o for o in result.outcomes if o.outcome is not Outcome.NONE]
    shown = replace(result, outcomes=acted)
    return message(shown).replace("gpuplan stop-idle", "gpuplan schedule", 1)
