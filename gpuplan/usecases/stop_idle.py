"""``stop-idle``: survey, plan, and (with ``apply``) act on idle GPU instances safely.

Order of a run: take the run lock (a second concurrent run waits, then gives up
cleanly); survey every scope; plan (pure core); record the run and each decision in the
ledger; unless dry run or aborted, execute: per scope, re-read each instance's state
and tags and its latest datapoints right before acting, and act only if it is still
running and still idle. One failing instance never fails the batch. Every action is
recorded; one webhook message per applied run lists actions and unknowns.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from gpuplan.core.errors import GpuplanError
from gpuplan.core.fleet import Action, GpuInstance, InstanceState
from gpuplan.core.idle import STOPPED_AT_TAG, IdleRule, IdleVerdict, window_bounds
from gpuplan.core.lifecycle import Plan, PlannedAction, Step, plan
from gpuplan.core.policy import Policy
from gpuplan.ledger import ActionRecord, DecisionRecord, Ledger
from gpuplan.providers.base import LifecycleProvider
from gpuplan.providers.webhook import Notifier
from gpuplan.usecases.fleet import Survey, action_rule, decide_one, fetch_samples, idle_rule, survey

DONE = {
    Action.STOP: "stopped",
    Action.HIBERNATE: "hibernated",
    Action.SUSPEND: "suspended",
    Action.DEALLOCATE: "deallocated",
    Action.TERMINATE: "terminated",
}


class LockBusy(GpuplanError):
    """Another stop-idle run holds the lock."""


@dataclass
class Outcome:
    """What one instance ended with: ``action`` as the JSON contract names it."""

    item: PlannedAction
    action: str = "none"
    detail: str = ""


@dataclass
class StopIdleResult:
    policy: str
    dry_run: bool
    started_at: datetime
    outcomes: list[Outcome] = field(default_factory=list)
    aborted: str | None = None
    problems: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    run_id: int | None = None
    window_minutes: int = 60

    @property
    def failed(self) -> bool:
        return bool(self.aborted or self.problems) or any(
            o.action == "failed" for o in self.outcomes
        )


@contextmanager
def run_lock(path: Path, wait_seconds: float) -> Iterator[None]:
    """An exclusive lock file; waits up to ``wait_seconds``, then raises LockBusy."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockBusy(
                        f"another stop-idle run holds {path}; nothing was done"
                    ) from None
                time.sleep(0.2)
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()))
            handle.flush()
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


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
    result.outcomes = [Outcome(item) for item in planned.items]
    if apply and planned.aborted is None:
        _execute(result.outcomes, by_id, rule, now)
    elif planned.aborted is not None:
        for o in result.outcomes:
            if o.item.step is Step.ACT:
                o.action, o.detail = ("skipped" if apply else "none"), planned.aborted
    if ledger is not None:
        result.run_id = _record(ledger, result, now)
    if apply and notifier is not None:
        text = message(result)
        if text:
            delivery = notifier.send(text)
            if not delivery.ok:
                result.problems.append(f"webhook not delivered: {delivery.error}")
                if ledger is not None and result.run_id is not None:
                    # The run was recorded before sending; it failed after all: say so.
                    ledger.finish_run(result.run_id, now, "failed", summary=summary(result))
    return result


def _plan(policy: Policy, seen: Survey, now: datetime) -> Plan:
    triples = [(s.instance, s.decision, s.provider.capabilities) for s in seen.seen]
    if not triples:
        return Plan(())
    # Every cloud shares the policy's action (Azure turns stop into deallocate); the
    # cap on actions counts across all of them.
    items: list[PlannedAction] = []
    aborted: str | None = None
    for provider in dict.fromkeys(s.instance.provider for s in seen.seen):
        part = plan(
            [t for t in triples if t[0].provider is provider],
            action_rule(policy, provider),
            now,
        )
        items.extend(part.items)
    total = sum(1 for i in items if i.step is Step.ACT)
    limit = policy.idle.max_actions_per_run
    if total > limit:
        aborted = (
            f"aborted: {total} instances would be acted on, more than "
            f"max_actions_per_run = {limit}; nothing was done"
        )
    return Plan(tuple(items), aborted)


def _execute(
    outcomes: list[Outcome],
    providers: dict[str, LifecycleProvider],
    rule: IdleRule,
    now: datetime,
) -> None:
    for o in outcomes:
        step = o.item.step
        adapter = providers[o.item.instance.instance_id]
        if step is Step.SKIP:
            o.action, o.detail = "skipped", o.item.note
        elif step in (Step.MARK, Step.NOTIFY, Step.CLEAR):
            _tag_step(adapter, o)
    acting = [o for o in outcomes if o.item.step is Step.ACT]
    for adapter in dict.fromkeys(providers[o.item.instance.instance_id] for o in acting):
        mine = [o for o in acting if providers[o.item.instance.instance_id] is adapter]
        _act_in_scope(adapter, mine, rule, now)


def _tag_step(adapter: LifecycleProvider, o: Outcome) -> None:
    """Notice tags and notify-only steps: no stop, a tag at most."""
    item = o.item
    try:
        if item.tags:
            adapter.tag(item.instance, item.tags)
        if item.untag:
            adapter.untag(item.instance, item.untag)
    except GpuplanError as exc:
        o.action, o.detail = "failed", exc.message
        return
    o.detail = item.note
    if item.step is not Step.CLEAR:
        o.action = "notified"


def _act_in_scope(
    adapter: LifecycleProvider, outcomes: list[Outcome], rule: IdleRule, now: datetime
) -> None:
    """Re-read state, tags and the latest datapoints, then act on what is still idle."""
    fresh: dict[str, GpuInstance] = {}
    for o in outcomes:
        try:
            fresh[o.item.instance.instance_id] = adapter.refresh(o.item.instance)
        except GpuplanError as exc:
            o.action, o.detail = "failed", f"re-read before acting failed: {exc.message}"
    start, end = window_bounds(rule, now)
    samples, failure = fetch_samples(adapter, list(fresh.values()), start, end, rule)
    for o in outcomes:
        inst = fresh.get(o.item.instance.instance_id)
        if inst is None:
            continue
        if inst.state is not InstanceState.RUNNING:
            o.action, o.detail = "skipped", f"state changed to {inst.state.value} since the plan"
            continue
        again = decide_one(inst, samples, rule, now, failure)
        if again.verdict is not IdleVerdict.IDLE:
            o.action, o.detail = "skipped", f"no longer idle: {again.reason}"
            continue
        o.action = _do(adapter, inst, o)


def _do(adapter: LifecycleProvider, inst: GpuInstance, o: Outcome) -> str:
    item = o.item
    try:
        if item.do is Action.TERMINATE:
            adapter.terminate(inst)
        else:
            # GCP adapters carry out suspend as stop(hibernate=True) (Capability.SUSPEND).
            adapter.stop(inst, hibernate=item.do in (Action.HIBERNATE, Action.SUSPEND))
    except GpuplanError as exc:
        o.detail = exc.message
        return "failed"
    o.detail = item.note
    try:
        adapter.tag(inst, item.tags)
        if item.untag:
            adapter.untag(inst, item.untag)
    except GpuplanError as exc:
        o.detail = f"{item.note}; tagging failed: {exc.message}".lstrip("; ")
    return DONE.get(item.do, item.do.value)


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
        if o.action != "none":
            ledger.record_action(
                run_id,
                ActionRecord(
                    provider=inst.provider.value,
                    region=inst.region,
                    instance_id=inst.instance_id,
                    action=(o.item.do if o.item.step is Step.ACT else o.item.planned_action).value,
                    outcome=o.action,
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
        counts[o.action] = counts.get(o.action, 0) + 1
    verdicts: dict[str, int] = {}
    for o in result.outcomes:
        v = o.item.decision.verdict.value
        verdicts[v] = verdicts.get(v, 0) + 1
    acted = [
        {**_brief(o.item.instance), "action": o.action}
        for o in result.outcomes
        if o.action in DONE.values()
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
        if o.action not in ("none",):
            lines.append(f"- {o.action}: {name}. {o.item.decision.reason}. {o.detail}".rstrip())
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


def decision_record(o: Outcome) -> dict[str, Any]:
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
        "action": o.action,
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
