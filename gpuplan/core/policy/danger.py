"""What ``gpuplan policy check`` says about a valid policy beyond errors.

Pure. Two kinds of finding, each at the key path it is about:

- :func:`data_loss_unstated`: an acting idle action (stop, hibernate, suspend; Azure's stop
  is a deallocate) on a scope with clouds, and no ``idle.allow_data_loss`` written. Every
  acting action erases local instance storage (AWS instance store, GCP local SSD, Azure
  temporary disk), so the default (skip such instances) leaves most AWS and Azure GPU
  instances running; the policy must say which it wants. An error.
- :func:`dangerous_settings`: settings the simulator shows stop live work
  (docs/simulation.md): a threshold above 20%, a window under 30 minutes, coverage under
  50%. Warnings: the policy stays valid.
"""

from __future__ import annotations

from gpuplan.core.clouds import facts_of
from gpuplan.core.policy.models import IdleAction, Policy
from gpuplan.core.policy.rules import PolicyProblem

ACTING = frozenset({IdleAction.STOP, IdleAction.HIBERNATE, IdleAction.SUSPEND})
"""Actions after which the instance can come back, but not its local disks
(``terminate`` already needs ``allow_data_loss: true``; ``notify`` changes nothing)."""

MAX_SAFE_THRESHOLD = 20.0
MIN_SAFE_WINDOW = 30
MIN_SAFE_COVERAGE = 50.0


def data_loss_unstated(policy: Policy) -> PolicyProblem | None:
    """The error when the policy acts on clouds in scope without stating ``allow_data_loss``."""
    idle = policy.idle
    clouds = policy.scope.providers
    if idle.action not in ACTING or not clouds or "allow_data_loss" in idle.model_fields_set:
        return None
    erased = ", ".join(facts_of(c).local_storage for c in clouds)
    return PolicyProblem(
        ("idle", "allow_data_loss"),
        f"missing: write true or false. {idle.action.value} erases {erased}; false leaves "
        "such instances running (skipped, said so), true acts and the data is lost",
    )


def dangerous_settings(policy: Policy) -> list[PolicyProblem]:
    """Valid settings that the simulator shows stop live work or act on thin data."""
    idle = policy.idle
    out: list[PolicyProblem] = []
    if idle.threshold_percent > MAX_SAFE_THRESHOLD:
        out.append(
            PolicyProblem(
                ("idle", "threshold_percent"),
                f"{idle.threshold_percent:g}% is above {MAX_SAFE_THRESHOLD:g}%: jobs running "
                "at that utilisation (an 8-GPU job at 40% is working) would be stopped",
            )
        )
    if idle.window_minutes < MIN_SAFE_WINDOW:
        out.append(
            PolicyProblem(
                ("idle", "window_minutes"),
                f"{idle.window_minutes} min is under {MIN_SAFE_WINDOW} min: checkpoints, "
                "evaluations and think-time pauses last longer (docs/simulation.md)",
            )
        )
    if idle.min_coverage_percent < MIN_SAFE_COVERAGE:
        out.append(
            PolicyProblem(
                ("idle", "min_coverage_percent"),
                f"{idle.min_coverage_percent:g}% is under {MIN_SAFE_COVERAGE:g}%: an "
                "instance whose agent mostly failed to report could be called idle",
            )
        )
    return out
