"""Lifetime and exemption rules on a ``stop-idle`` run: the policy's settings, the plan
overlay (:mod:`gpuplan.core.lifecycle.lifetime_plan`) and the executor's re-check.

Which adapters can snapshot is asked of each adapter (:class:`gpuplan.core.lifecycle.actions.
Snapshotter`); the re-check runs the same overlay on the instance re-read right before
acting, so a snooze, a restart or an exemption added since the plan is honoured.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from gpuplan.core.lifecycle.actions import Snapshotter
from gpuplan.core.lifecycle.idle import IdleDecision, IdleVerdict
from gpuplan.core.lifecycle.instances import GpuInstance
from gpuplan.core.lifecycle.lifetime_plan import Rules, overlay, plan_all
from gpuplan.core.lifecycle.lifetimes import Limits
from gpuplan.core.lifecycle.plan import Plan, PlannedAction, Step
from gpuplan.core.policy import Policy
from gpuplan.usecases.lifecycle.survey import Survey, action_rule


def rules_of(policy: Policy) -> Rules:
    """The overlay's settings, from the policy's ``lifetimes`` and ``exemptions``."""
    life = policy.lifetimes
    return Rules(
        limits=Limits(
            max_runtime_minutes=life.max_runtime or None,
            stopped_for_days=life.stopped_for_days,
            expires_tag=life.expires_tag,
            notice_minutes=life.notice_minutes,
            max_snooze_minutes=life.max_snooze,
        ),
        exempt_tag=policy.idle.exempt_tag,
        exempt_max_days=policy.exemptions.max_days,
        exempt_notice_minutes=policy.exemptions.notice_minutes,
        match_labels=dict(policy.scope.match_labels),
    )


def with_lifetimes(
    policy: Policy, seen: Survey, items: Sequence[PlannedAction], now: datetime
) -> Plan:
    """The idle plan items (uncapped) with the lifetime and exemption rules laid over
    them; the breaker judged on the idle actions, the cap on all."""
    capabilities = {s.instance.instance_id: s.adapter.capabilities for s in seen.seen}
    can_snapshot = {s.instance.instance_id: isinstance(s.adapter, Snapshotter) for s in seen.seen}
    return plan_all(
        items,
        lambda provider: action_rule(policy, provider),
        rules_of(policy),
        now,
        capabilities,
        can_snapshot,
    )


def lifetime_check(
    policy: Policy, seen: Survey, now: datetime
) -> Callable[[GpuInstance, PlannedAction], str | None]:
    """The executor's re-check of a lifetime action on the re-read instance."""
    rules = rules_of(policy)
    adapters = {s.instance.instance_id: s.adapter for s in seen.seen}

    def check(inst: GpuInstance, item: PlannedAction) -> str | None:
        adapter = adapters.get(inst.instance_id)
        if adapter is None:
            return "not in the survey"
        blank = PlannedAction(
            inst, IdleDecision(IdleVerdict.BUSY, ""), item.planned_action, Step.NONE
        )
        again = overlay(
            blank,
            action_rule(policy, inst.provider),
            rules,
            now,
            adapter.capabilities,
            isinstance(adapter, Snapshotter),
        )
        if again.step is Step.ACT and again.lifetime == item.lifetime and again.do is item.do:
            return None
        return f"{item.lifetime} no longer due: {again.note or again.decision.reason or 'changed'}"

    return check
