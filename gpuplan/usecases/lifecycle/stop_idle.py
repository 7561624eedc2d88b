"""``stop-idle``: survey, plan, and (with ``apply``) act on idle GPU instances safely.

Order of a run (the caller holds the run session: lock and ledger): survey every
scope; plan (pure core); record the run and each decision in the
ledger; unless dry run or aborted, execute: per scope, re-read each instance's state
and tags and its latest datapoints right before acting, and act only if it is still
running and still idle. One failing instance never fails the batch. Every action is
recorded; one webhook message per applied run lists actions and unknowns.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gpuplan.core.errors import GpuplanError
from gpuplan.core.lifecycle.actions import ACTIONS, ActionTable
from gpuplan.core.lifecycle.idle import STOPPED_AT_TAG, IdleRule, IdleVerdict
from gpuplan.core.lifecycle.instances import GpuInstance
from gpuplan.core.lifecycle.plan import Outcome, Plan, SkipReason, Step, plan_one
from gpuplan.core.lifecycle.workloads import unit_fields
from gpuplan.core.policy import Policy
from gpuplan.ledger import Ledger
from gpuplan.providers.base import CloudAdapter, Previewer
from gpuplan.providers.webhook import Notifier
from gpuplan.usecases.lifecycle.concurrency import SERIAL, Concurrency
from gpuplan.usecases.lifecycle.executor import Executor, InstanceResult
from gpuplan.usecases.lifecycle.journal import Journal
from gpuplan.usecases.lifecycle.lifetimes import lifetime_check, with_lifetimes
from gpuplan.usecases.lifecycle.owner_notices import (
    OwnerNotifier,
    OwnerSent,
    notices_of,
    problems_of,
    tell_owners,
)
from gpuplan.usecases.lifecycle.reconcile import Owner, Reconciled, reconcile
from gpuplan.usecases.lifecycle.survey import Survey, action_rule, idle_rule, survey


@dataclass
class StopIdleResult:
    policy: str
    dry_run: bool
    started_at: datetime
    outcomes: list[InstanceResult] = field(default_factory=list)
    aborted: str | None = None
    problems: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    run_id: int | None = None
    window_minutes: int = 60
    reconciled: list[Reconciled] = field(default_factory=list)
    """Intents a killed run left behind, settled against the cloud by this run."""
    interrupted: bool = False
    """A stop request (SIGTERM, Ctrl-C) ended the run before every action."""
    owner_notices: list[OwnerSent] = field(default_factory=list)
    """The notices sent to instances' owners (``owners:``), once each."""

    @property
    def failed(self) -> bool:
        return bool(self.aborted or self.problems or self.interrupted) or any(
            o.outcome is Outcome.FAILED for o in self.outcomes
        )


def run_stop_idle(
    policy: Policy,
    providers: Sequence[CloudAdapter],
    *,
    apply: bool,
    now: datetime,
    ledger: Ledger | None = None,
    notifier: Notifier | None = None,
    problems: Sequence[str] = (),
    instance_ids: Collection[str] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    concurrency: Concurrency = SERIAL,
    on_scope: Callable[[CloudAdapter, Survey], None] | None = None,
    actions: ActionTable = ACTIONS,
    owners: OwnerNotifier | None = None,
) -> StopIdleResult:
    """One run; ``instance_ids`` narrows it to those instances (the TUI's single stop).

    ``should_stop`` is asked before each cloud call (SIGTERM, Ctrl-C): once true, the
    rest is left alone and the result says ``interrupted``. ``concurrency`` bounds the
    scopes surveyed (and re-checked) at once; the ledger is written from this thread
    only, in the same order as a serial run. ``actions``: the steps of each action per
    cloud (:data:`gpuplan.core.lifecycle.actions.ACTIONS`).
    """
    rule = idle_rule(policy)
    seen = survey(providers, rule, now, instance_ids, concurrency=concurrency, on_scope=on_scope)
    planned = _plan(policy, seen, now)
    result, journal, by_id = open_run(
        "stop-idle", policy, seen, planned, rule, apply=apply, now=now, ledger=ledger,
        problems=problems, notices=seen.notices,
    )  # fmt: skip
    if apply:
        listed = {s.instance.instance_id: (s.instance, s.adapter) for s in seen.seen}
        owner = Owner(
            journal.run_id, policy.name, set(seen.listed),  # a failed listing settles nothing
            ledger.lock_name if ledger else "", ledger.shard if ledger else "", instance_ids,
        )  # fmt: skip
        idle = {s.instance.instance_id for s in seen.seen if s.decision.verdict is IdleVerdict.IDLE}
        result.reconciled = reconcile(ledger, listed, rule.code, now, owner, idle)
    if apply and planned.aborted is None:
        settling = {
            r.instance_id: r.detail for r in result.reconciled if r.outcome is Outcome.SKIPPED
        }  # another run holds the claim: it settles, and this run leaves the instance alone
        executor = Executor(journal, rule, now, should_stop, concurrency, actions, settling)
        executor.lifetime_check = lifetime_check(policy, seen, now)
        executor.run(result.outcomes, by_id)
        result.problems.extend(executor.problems)
        result.interrupted = executor.interrupted
        if owners is not None:  # the owner told of what was just noticed (tagged)
            result.owner_notices = tell_owners(owners, result.outcomes, ledger, now)
            result.problems.extend([*owners.drain(), *problems_of(result.owner_notices)])
            result.notices.extend(notices_of(result.owner_notices))
    else:
        if planned.aborted is None:
            platform_preview(result.outcomes, by_id)
        not_acted(result, journal, apply, now)
    finish(result, ledger, notifier if apply else None, now, message)
    return result


def platform_preview(outcomes: Sequence[InstanceResult], by_id: Mapping[str, CloudAdapter]) -> None:
    """A dry run's would-be actions sent through the platform's own dry run, where it has
    one (Kubernetes ``dryRun=All``): its answer, or why it refused, is the detail."""
    for o in outcomes:
        adapter = by_id.get(o.item.instance.instance_id)
        if o.item.step is not Step.ACT or not isinstance(adapter, Previewer):
            continue
        try:
            o.detail = adapter.preview(o.item.instance, o.item.do)
        except GpuplanError as exc:
            o.detail = f"dry run refused by the platform: {exc.message}"


def open_run(
    kind: str,
    policy: Policy,
    seen: Survey,
    planned: Plan,
    rule: IdleRule,
    *,
    apply: bool,
    now: datetime,
    ledger: Ledger | None,
    problems: Sequence[str],
    notices: list[str],
) -> tuple[StopIdleResult, Journal, dict[str, CloudAdapter]]:
    """A run's result (one outcome per planned item) and its journal, opened in the ledger
    as a run of ``kind`` (``stop-idle``, ``schedule``) with every decision; with the
    adapter of each surveyed instance by id."""
    result = StopIdleResult(policy.name, not apply, now, aborted=planned.aborted)
    result.window_minutes = rule.window_minutes
    result.problems = [*problems, *seen.problems]
    result.notices = notices
    by_id = {s.instance.instance_id: s.adapter for s in seen.seen}
    result.outcomes = [InstanceResult(item) for item in planned.items]
    journal = Journal(ledger, scopes={iid: adapter.scope for iid, adapter in by_id.items()})
    journal.open(kind, policy.name, now, not apply, planned.items, rule.window_minutes)
    result.run_id = journal.run_id
    return result, journal, by_id


def finish(
    result: StopIdleResult,
    ledger: Ledger | None,
    notifier: Notifier | None,
    now: datetime,
    text_of: Callable[[StopIdleResult], str],
) -> None:
    """The run's status and summary in the ledger, then the webhook (applied runs) with
    ``text_of(result)`` (nothing sent when it is empty)."""
    if ledger is not None and result.run_id is not None:
        status = "aborted" if result.aborted else ("failed" if result.failed else "ok")
        ledger.finish_run(result.run_id, now, status, summary=summary(result))
    if notifier is not None:
        text = text_of(result)
        if text:
            delivery = notifier.send(text)
            if not delivery.ok:
                result.problems.append(f"webhook not delivered: {delivery.error}")
                if ledger is not None and result.run_id is not None:
                    # The run was recorded before sending; it failed after all: say so.
                    ledger.finish_run(result.run_id, now, "failed", summary=summary(result))


def not_acted(result: StopIdleResult, journal: Journal, apply: bool, now: datetime) -> None:
    """Dry run or aborted run: each would-be action recorded with why it was not done."""
    for o in result.outcomes:
        if o.item.step is Step.ACT and result.aborted is not None:
            o.outcome = Outcome.SKIPPED if apply else Outcome.NONE
            o.detail = result.aborted
        elif o.item.step is Step.DEFER:
            o.outcome, o.detail = Outcome.DEFERRED, o.item.note
        if o.outcome is not Outcome.NONE:
            journal.record(o.item, o.outcome, o.detail, now)


def _plan(policy: Policy, seen: Survey, now: datetime) -> Plan:
    # Every cloud shares the policy's action (Azure turns stop into deallocate); the
    # core counts the cap across all of them.
    # One plan item per instance, uncapped: the lifetime rules are laid over them and the
    # cap then counts every action alike (core/lifecycle/lifetime_plan.py).
    items = [
        plan_one(s.instance, s.decision, action_rule(policy, s.instance.provider), now,
                 s.adapter.capabilities)
        for s in seen.seen
    ]  # fmt: skip
    return with_lifetimes(policy, seen, items, now)


def summary(result: StopIdleResult) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for o in result.outcomes:
        counts[o.outcome.value] = counts.get(o.outcome.value, 0) + 1
    verdicts: dict[str, int] = {}
    for o in result.outcomes:
        v = o.item.decision.verdict.value
        verdicts[v] = verdicts.get(v, 0) + 1
    acted = [
        {**_brief(o.item.instance), "action": o.outcome.value}
        for o in result.outcomes
        if o.outcome.acted
    ] + [
        {**_brief(r.instance), "action": r.outcome.value}
        for r in result.reconciled
        if r.instance is not None and r.outcome.acted
    ]
    idle = [
        _brief(o.item.instance)
        for o in result.outcomes
        if o.item.decision.verdict is IdleVerdict.IDLE
    ]
    restarted = [
        {"instance_id": o.item.instance.instance_id, "stopped_at": o.item.instance.labels[tag]}
        for o in result.outcomes
        if (tag := STOPPED_AT_TAG) in o.item.instance.labels and o.item.instance.state.bills_compute
    ]
    return {
        "actions": counts,
        "verdicts": verdicts,
        "acted": acted,
        "idle": idle,
        "restarted": restarted,
        "window_minutes": result.window_minutes,
        "problems": result.problems,
        "reconciled": [_reconciled(r) for r in result.reconciled],
        "interrupted": result.interrupted,
    }


def _reconciled(r: Reconciled) -> dict[str, Any]:
    return {"instance_id": r.instance_id, "action": r.action.value,
            "outcome": r.outcome.value, "detail": r.detail}  # fmt: skip


def _brief(inst: GpuInstance) -> dict[str, Any]:
    return {
        "instance_id": inst.instance_id,
        "region": inst.region,
        "instance_type": inst.instance_type,
        "gpu_count": inst.gpu_count,
        "hourly_usd": str(inst.hourly_usd or ""),
        "labels": dict(inst.labels),
    }


def data_loss_skips(result: StopIdleResult) -> list[InstanceResult]:
    """Idle instances left running because the action would erase local data."""
    return [o for o in result.outcomes if o.item.skip is SkipReason.DATA_LOSS]


def message(result: StopIdleResult) -> str:
    """The webhook text: actions, notices, unknowns and failures; empty when nothing to say."""
    lines: list[str] = []
    for o in result.outcomes:
        inst = o.item.instance
        name = f"{inst.instance_id} ({inst.instance_type}, {inst.region})"
        if o.outcome is not Outcome.NONE:
            lines.append(
                f"- {o.outcome.value}: {name}. {o.item.decision.reason}. {o.detail}".rstrip()
            )
        elif o.item.decision.verdict is IdleVerdict.UNKNOWN:
            lines.append(
                f"- unknown: install or fix the GPU metrics agent on {name}: "
                f"{o.item.decision.reason}"
            )
    lines.extend(
        f"- reconciled: {r.instance_id} {r.outcome.value}: {r.detail}" for r in result.reconciled
    )
    lines.extend(f"- problem: {p}" for p in result.problems)
    if result.aborted:
        lines.insert(0, result.aborted)
    if not lines:
        return ""
    return f"gpuplan stop-idle, policy {result.policy}:\n" + "\n".join(lines)


def decision_record(o: InstanceResult) -> dict[str, Any]:
    """One instance in ``stop-idle --json`` (the contract fields first)."""
    inst, d = o.item.instance, o.item.decision
    return {
        "provider": inst.provider.value,
        "region": inst.region,
        "zone": inst.zone,
        "instance_id": inst.instance_id,
        "instance_type": inst.instance_type,
        "state": inst.state.value,
        "verdict": d.verdict.value,
        "reason": d.reason,
        "planned_action": o.item.planned_action.value,
        "step": o.item.step.value,
        "skip": o.item.skip.value if o.item.skip else None,
        "action": o.outcome.value,
        "hourly_usd": inst.hourly_usd,
        "detail": o.detail or o.item.note,
        "warnings": list(o.item.warnings),
        "name": inst.name,
        "gpu": inst.gpu,
        "gpu_count": inst.gpu_count,
        "max_percent": d.max_percent,
        "mean_percent": d.mean_percent,
        "coverage_percent": d.coverage_percent,
        "idle_minutes": d.idle_minutes,
        **unit_fields(inst.attributes),
    }


def result_record(result: StopIdleResult) -> dict[str, Any]:
    return {
        "policy": result.policy,
        "dry_run": result.dry_run,
        "started_at": result.started_at,
        "run_id": result.run_id,
        "aborted": result.aborted,
        "problems": result.problems,
        "notices": result.notices,
        "reconciled": [_reconciled(r) for r in result.reconciled],
        "interrupted": result.interrupted,
        "owner_notices": [s.record() for s in result.owner_notices],
        "summary": summary(result)["actions"],
        "decisions": [decision_record(o) for o in result.outcomes],
    }
