"""The stop-idle use case over any adapter: dry run stops nothing, ``apply`` acts on
exactly the idle ones, with the planner's own rules (actions, skips, tags)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpuplan.core.policy import Policy
from gpuplan.providers.base import CloudAdapter
from gpuplan.usecases.lifecycle.stop_idle import StopIdleResult, run_stop_idle
from tests.fakes.scenarios import NOW, TEAM


def policy(scope: dict[str, Any], **idle: Any) -> Policy:
    return Policy.model_validate(
        {
            "version": 1,
            "name": "contract",
            "scope": {**scope, "match_labels": TEAM},
            "idle": {"max_actions_per_run": 20, **idle},
        }
    )


def actions(result: StopIdleResult) -> dict[str, str]:
    return {o.item.instance.name or "": o.outcome.value for o in result.outcomes}


def run(policy: Policy, providers: Sequence[CloudAdapter], *, apply: bool) -> StopIdleResult:
    return run_stop_idle(policy, providers, apply=apply, now=NOW)
