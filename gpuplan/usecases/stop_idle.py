"""``stop-idle``: survey, plan, and (with ``apply``) act on idle GPU instances safely.

Order of a run (the caller holds the run session: lock and ledger): survey every
scope; plan (pure core); record the run and each decision in the
ledger; unless dry run or aborted, execute: per scope, re-read each instance's state
and tags and its latest datapoints right before acting, and act only if it is still
running and still idle. One failing instance never fails the batch. Every action is
recorded; one webhook message per applied run lists actions and unknowns.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gpuplan.core.errors import GpuplanError
from gpuplan.core.fleet import GpuInstance, InstanceState
from gpuplan.core.idle import STOPPED_AT_TAG, IdleRule, IdleVerdict, window_bounds
from gpuplan.core.lifecycle import DONE, Outcome, Plan, PlannedAction, Step, plan
from gpuplan.core.policy import Policy
from gpuplan.ledger import ActionRecord, DecisionRecord, Ledger
from gpuplan.providers.base import LifecycleProvider
from gpuplan.providers.webhook import Notifier
from gpuplan.usecases.fleet import Survey, action_rule, decide_one, fetch_samples, idle_rule, survey


@dataclass
class InstanceResult:
    """One instance in a run: the plan for it, its outcome, and why."""

    item: PlannedAction
    outcome: Outcome = Outcome.NONE
    detail: str = ""


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

    @property
    def failed(self) -> bool:
        return bool(self.aborted or self.problems) or any(
            o.outcome is Outcome.FAILED for o in self.outcomes
        )


def run_stop_idle(
    policy: Policy,
    providers: Sequence[LifecycleProvider],
    *,
    apply: bool,
    now: datetime,
    ledger: Ledger | None = None,
    notifier: Notifier | None = None,
    problems: Sequence[str] = (),
    instance_ids: Collection[str] | None = None,
) -> StopIdleResult:
    """One run; ``instance_ids`` narrows it to those instances (the TUI's single stop)."""
    rule = idle_rule(policy)
    seen = survey(providers, rule, now, instance_ids)
    planned = _plan(policy, seen, now)
    result = StopIdleResult(policy.name, not apply, now, aborted=planned.aborted)
    result.window_minutes = rule.window_minutes
    result.problems = [*problems, *seen.problems]
    result.notices = seen.notices
    by_id = {s.instance.instance_id: s.provider for s in seen.seen}
    result.outcomes = [InstanceResult(item) for item in planned.items]
    if apply and planned.aborted is None:
        _execute(result.outcomes, by_id, rule, now)
    elif planned.aborted is not None:
        for o in result.outcomes:
            if o.item.step is Step.ACT:
                o.outcome = Outcome.SKIPPED if apply else Outcome.NONE
                o.detail = planned.aborted
    if ledger is not None:
        result.run_id = _record(ledger, result, now)
    if apply and notifier is not None:
        text = message(result)
        if text:
            delivery = notifier.send(text)
            if not delivery.ok:
                result.problems.append(f"webhook not delivered: {delivery.error}")
    return result


def _plan(policy: Policy, seen: Survey, now: datetime) -> Plan:
    # Every cloud shares the policy's action (Azure turns stop into deallocate); the
    # core counts the cap across all of them.
    triples = [(s.instance, s.decision, s.provider.capabilities) for s in seen.seen]
    return plan(triples, lambda provider: action_rule(policy, provider), now)


def _execute(
    outcomes: list[InstanceResult],
    providers: dict[str, LifecycleProvider],
    rule: IdleRule,
    now: datetime,
) -> None:
    for o in outcomes:
        step = o.item.step
        adapter = providers[o.item.instance.instance_id]
        if step is Step.SKIP:
            o.outcome, o.detail = Outcome.SKIPPED, o.item.note
        elif step in (Step.MARK, Step.NOTIFY, Step.CLEAR):
            _tag_step(adapter, o)
    acting = [o for o in outcomes if o.item.step is Step.ACT]
    for adapter in dict.fromkeys(providers[o.item.instance.instance_id] for o in acting):
        mine = [o for o in acting if providers[o.item.instance.instance_id] is adapter]
        _act_in_scope(adapter, mine, rule, now)


def _tag_step(adapter: LifecycleProvider, o: InstanceResult) -> None:
    """Notice tags and notify-only steps: no stop, a tag at most."""
    item = o.item
    try:
        if item.tags:
            adapter.tag(item.instance, item.tags)
        if item.untag:
            adapter.untag(item.instance, item.untag)
    except GpuplanError as exc:
        o.outcome, o.detail = Outcome.FAILED, exc.message
        return
    o.detail = item.note
    if item.step is not Step.CLEAR:
        o.outcome = Outcome.NOTIFIED


def _act_in_scope(
    adapter: LifecycleProvider, outcomes: list[InstanceResult], rule: IdleRule, now: datetime
) -> None:
    """Re-read state, tags and the latest datapoints, then act on what is still idle."""
    fresh: dict[str, GpuInstance] = {}
    for o in outcomes:
        try:
            fresh[o.item.instance.instance_id] = adapter.refresh(o.item.instance)
        except GpuplanError as exc:
            o.outcome = Outcome.FAILED
            o.detail = f"re-read before acting failed: {exc.message}"
    start, end = window_bounds(rule, now)
    samples, failure = fetch_samples(adapter, list(fresh.values()), start, end, rule)
    for o in outcomes:
        inst = fresh.get(o.item.instance.instance_id)
        if inst is None:
            continue
        if inst.state is not InstanceState.RUNNING:
            o.outcome = Outcome.SKIPPED
            o.detail = f"state changed to {inst.state.value} since the plan"
            continue
        again = decide_one(inst, samples, rule, now, failure)
        if again.verdict is not IdleVerdict.IDLE:
            o.outcome, o.detail = Outcome.SKIPPED, f"no longer idle: {again.reason}"
            continue
        o.outcome = _do(adapter, inst, o)


def _do(adapter: LifecycleProvider, inst: GpuInstance, o: InstanceResult) -> Outcome:
    item = o.item
    try:
        adapter.act(inst, item.do)
    except GpuplanError as exc:
        o.detail = exc.message
        return Outcome.FAILED
    o.detail = item.note
    try:
        adapter.tag(inst, item.tags)
        if item.untag:
            adapter.untag(inst, item.untag)
    except GpuplanError as exc:
        o.detail = f"{item.note}; tagging failed: {exc.message}".lstrip("; ")
    return DONE[item.do]


def _record(ledger: Ledger, result: StopIdleResult, now: datetime) -> int:
    """The whole run in one ledger transaction: all of it is recorded, or none."""
    with ledger.transaction():
        return _record_run(ledger, result, now)


def _record_run(ledger: Ledger, result: StopIdleResult, now: datetime) -> int:
    run_id = ledger.start_run("stop-idle", result.policy, now, dry_run=result.dry_run)
    for o in result.outcomes:
        inst, d = o.item.instance, o.item.decision
        decision_id = ledger.record_decision(
            run_id,
            DecisionRecord(
                provider=inst.provider.value,
                region=inst.region,
                instance_id=inst.instance_id,
                instance_type=inst.instance_type,
                state=inst.state.value,
                verdict=d.verdict.value,
                reason=d.reason,
                planned_action=o.item.planned_action.value,
                decided_at=now,
                account=inst.account,
                zone=inst.zone,
                hourly_usd=inst.hourly_usd,
                labels=inst.labels,
            ),
        )
        if o.outcome is not Outcome.NONE:
            ledger.record_action(
                run_id,
                ActionRecord(
                    provider=inst.provider.value,
                    region=inst.region,
                    instance_id=inst.instance_id,
                    action=(o.item.do if o.item.step is Step.ACT else o.item.planned_action).value,
                    outcome=o.outcome.value,
                    acted_at=now,
                    detail=o.detail,
                    decision_id=decision_id,
                ),
            )
    status = "aborted" if result.aborted else ("failed" if result.failed else "ok")
    ledger.finish_run(run_id, now, status, summary=summary(result))
    return run_id


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
    }


def _brief(inst: GpuInstance) -> dict[str, Any]:
    return {
        "instance_id": inst.instance_id,
        "region": inst.region,
        "instance_type": inst.instance_type,
        "gpu_count": inst.gpu_count,
        "hourly_usd": str(inst.hourly_usd or ""),
        "labels": dict(inst.labels),
    }


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
        "summary": summary(result)["actions"],
        "decisions": [decision_record(o) for o in result.outcomes],
    }
