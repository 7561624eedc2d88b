"""Policy files as typed values, and the rules that span their keys.

Pure: the loader (``gpuplan.loaders.policy_file``) reads YAML and maps problems to
file lines; everything here works on values only.
"""

from __future__ import annotations

from gpuplan.core.policy.metrics_settings import (
    MetricsSettings,
    PrometheusMetrics,
)
from gpuplan.core.policy.models import (
    POLICY_VERSION,
    Budget,
    IdleAction,
    IdleSettings,
    Notify,
    Planning,
    Policy,
    Scope,
)
from gpuplan.core.policy.rules import (
    KeyPath,
    PolicyProblem,
    budget_exclusion,
    check_rules,
    out_of_scope_reason,
    planning_exclusion,
    resolve_gpus,
)

__all__ = [
    "POLICY_VERSION",
    "Budget",
    "IdleAction",
    "IdleSettings",
    "KeyPath",
    "MetricsSettings",
    "Notify",
    "Planning",
    "Policy",
    "PolicyProblem",
    "PrometheusMetrics",
    "Scope",
    "budget_exclusion",
    "check_rules",
    "out_of_scope_reason",
    "planning_exclusion",
    "resolve_gpus",
]
