"""One type for the idle thresholds: the policy's ``idle:`` section produces the core's
:class:`IdleRule`, with the same defaults and every threshold the policy sets."""

from __future__ import annotations

from dataclasses import fields

from gpuplan.core.lifecycle.idle import IdleRule as DecisionRule
from gpuplan.core.lifecycle.idle_signals import IdleRule
from gpuplan.core.policy import Policy
from gpuplan.core.policy.models import IdleSettings


def test_the_decision_and_the_signals_read_one_type() -> None:
    assert DecisionRule is IdleRule


def test_policy_defaults_are_the_rule_defaults() -> None:
    assert IdleSettings().rule() == IdleRule()
    # The scope's labels and the exemptions section's longest exemption come from
    # beside ``idle:``; every other field of the rule is an ``idle:`` key.
    names = {f.name for f in fields(IdleRule)} - {"match_labels", "exempt_max_days"}
    assert names <= set(IdleSettings.model_fields)


def test_policy_thresholds_and_scope_labels_reach_the_rule() -> None:
    policy = Policy.model_validate(
        {
            "version": 1,
            "name": "team",
            "scope": {"match_labels": {"team": "ml"}},
            "idle": {
                "threshold_percent": 7.5,
                "window_minutes": 90,
                "period_minutes": 10,
                "min_coverage_percent": 70,
                "live_process_window_minutes": 240,
                "gpu_memory_floor_percent": 2,
                "cpu_busy_percent": 15,
                "fault_hold_minutes": 30,
                "grace_minutes": 25,
                "exempt_tag": "keep-me",
            },
        }
    )
    rule = policy.idle.rule(policy.scope.match_labels)
    assert rule == IdleRule(
        threshold_percent=7.5,
        window_minutes=90,
        period_minutes=10,
        min_coverage_percent=70,
        live_process_window_minutes=240,
        gpu_memory_floor_percent=2,
        cpu_busy_percent=15,
        fault_hold_minutes=30,
        grace_minutes=25,
        exempt_tag="keep-me",
        match_labels={"team": "ml"},
    )
    assert rule.code == "idle-90m-lt7p5pct"
