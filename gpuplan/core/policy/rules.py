"""Rules across keys and against the GPU table, and which instances a policy governs.

Field types check one value each; the rules here need several (an action needs every
cloud in scope to offer it, as :mod:`gpuplan.core.lifecycle.actions` says; the window must hold
whole periods). Each problem carries the key path it is about, so the loader can point
at the line in the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from gpuplan.core.catalog.gpus import GpuTable
from gpuplan.core.catalog.offers import PricingModel, Provider
from gpuplan.core.clouds import facts_of
from gpuplan.core.errors import InputError
from gpuplan.core.lifecycle.actions import offered_by
from gpuplan.core.lifecycle.instances import ACTING, Action, GpuInstance, label_mismatch
from gpuplan.core.policy.lifetime_rules import lifetime_rules
from gpuplan.core.policy.models import IdleAction, Policy
from gpuplan.core.policy.section import CloudSection

KeyPath = tuple[str | int, ...]


@dataclass(frozen=True)
class PolicyProblem:
    """One broken rule, at a key path such as ``("idle", "action")``."""

    path: KeyPath
    message: str


def check_rules(policy: Policy) -> list[PolicyProblem]:
    """Rules that span keys; an empty list when the policy is consistent."""
    problems: list[PolicyProblem] = []
    idle = policy.idle
    if idle.period_minutes < 1:
        problems.append(PolicyProblem(("idle", "period_minutes"), "must be at least 1 minute"))
    elif idle.window_minutes < idle.period_minutes:
        problems.append(
            PolicyProblem(
                ("idle", "window_minutes"),
                f"must be at least period_minutes ({idle.period_minutes}), "
                f"got {idle.window_minutes}",
            )
        )
    elif idle.window_minutes % idle.period_minutes:
        problems.append(
            PolicyProblem(
                ("idle", "window_minutes"),
                f"must be a whole number of periods of {idle.period_minutes} minutes, "
                f"got {idle.window_minutes}",
            )
        )
    if idle.live_process_window_minutes < idle.window_minutes:
        problems.append(
            PolicyProblem(
                ("idle", "live_process_window_minutes"),
                f"must be at least window_minutes ({idle.window_minutes}), "
                f"got {idle.live_process_window_minutes}",
            )
        )
    problems.extend(action_rules(policy))
    if idle.action is IdleAction.TERMINATE and not idle.allow_data_loss:
        problems.append(
            PolicyProblem(
                ("idle", "action"),
                "terminate deletes the instance with its disks and instance storage; "
                "set idle.allow_data_loss: true to allow it",
            )
        )
    problems.extend(_budget_rules(policy))
    problems.extend(scope_rules(policy))
    problems.extend(region_rules(policy))
    problems.extend(PolicyProblem(path, message) for path, message in policy.schedules.problems())
    problems.extend(PolicyProblem(path, why) for path, why in lifetime_rules(policy))
    return problems


def action_rules(policy: Policy) -> list[PolicyProblem]:
    """An action only some clouds offer (:data:`~gpuplan.core.lifecycle.actions.ACTIONS`: suspend
    is GCP's) needs every cloud in scope to offer it. Hibernate is not checked here: the
    planner stops an instance that cannot hibernate instead (said so per instance)."""
    action = Action(policy.idle.action.value)
    if action not in ACTING or action is Action.HIBERNATE:
        return []
    offered = offered_by(action)
    if set(offered) == {p for p in Provider if not facts_of(p).catalog_only}:
        return []  # every cloud that gpuplan manages carries it out
    scope = policy.scope.providers
    others = [p.value for p in scope if p not in offered]
    names = " or ".join(facts_of(p).shown for p in offered)
    here = ("idle", "action")
    if others:
        return [
            PolicyProblem(
                here,
                f"{action.value} is a {names} action, but the scope also names "
                f"{', '.join(others)}; use stop or hibernate, or a separate {names} policy",
            )
        ]
    if not scope:
        listed = " or ".join(p.value for p in offered)
        return [PolicyProblem(here, f"{action.value} is a {names} action; scope names no {listed}")]
    return []


def scope_rules(policy: Policy) -> list[PolicyProblem]:
    """Each cloud section's own rules (:meth:`CloudSection.problems`: scopes listed or
    discovered, one way; regions that are the cloud's), at ``scope.<name>.<key>``."""
    problems: list[PolicyProblem] = []
    for provider in policy.scope.providers:
        section = policy.scope.section(provider)
        if isinstance(section, CloudSection):
            here = ("scope", provider.value)
            problems.extend(PolicyProblem((*here, *sub), why) for sub, why in section.problems())
    return problems


def region_rules(policy: Policy) -> list[PolicyProblem]:
    """Region names of ``planning.allowed_regions`` that no cloud has (a typo)."""
    from gpuplan.core.catalog.regions import close_matches, known_regions

    problems: list[PolicyProblem] = []
    every = known_regions()
    for index, region in enumerate(policy.planning.allowed_regions):
        if region.lower() not in every:
            matches = close_matches(region, every)
            why = f"unknown region {region!r}" + (
                f"; did you mean {', '.join(matches)}?" if matches else ""
            )
            problems.append(PolicyProblem(("planning", "allowed_regions", index), why))
    return problems


def _budget_rules(policy: Policy) -> list[PolicyProblem]:
    budget = policy.budget
    problems: list[PolicyProblem] = []
    seen: set[float] = set()
    for index, percent in enumerate(budget.alert_at_percent):
        if percent in seen:
            problems.append(
                PolicyProblem(("budget", "alert_at_percent", index), f"{percent:g} appears twice")
            )
        seen.add(percent)
    if "alert_at_percent" in budget.model_fields_set and budget.monthly_usd is None:
        problems.append(
            PolicyProblem(
                ("budget", "alert_at_percent"), "needs budget.monthly_usd to be a share of"
            )
        )
    if (
        budget.max_hourly_usd is not None
        and budget.monthly_usd is not None
        and budget.max_hourly_usd > budget.monthly_usd
    ):
        problems.append(
            PolicyProblem(
                ("budget", "max_hourly_usd"),
                f"is above monthly_usd ({budget.monthly_usd}): one hour would spend the month",
            )
        )
    return problems


def resolve_gpus(policy: Policy, gpus: GpuTable) -> tuple[Policy, list[PolicyProblem]]:
    """``planning.allowed_gpus`` as canonical names, with a problem per unknown name."""
    canonical: list[str] = []
    problems: list[PolicyProblem] = []
    for index, name in enumerate(policy.planning.allowed_gpus):
        try:
            resolved = gpus.resolve(name).name
        except InputError as exc:
            problems.append(PolicyProblem(("planning", "allowed_gpus", index), exc.message))
            continue
        if resolved not in canonical:
            canonical.append(resolved)
    planning = policy.planning.model_copy(update={"allowed_gpus": canonical})
    return policy.model_copy(update={"planning": planning}), problems


def out_of_scope_reason(instance: GpuInstance, policy: Policy) -> str | None:
    """Why ``instance`` is not governed by ``policy``, or None when it is."""
    scope = policy.scope
    if instance.provider not in scope.providers:
        return f"{instance.provider.value} is not in the policy's scope"
    section = scope.section(instance.provider)
    if isinstance(section, CloudSection):
        why = section.out_of_scope(instance)
        if why is not None:
            return why
    return label_mismatch(instance.labels, scope.match_labels)


def planning_exclusion(
    policy: Policy, *, gpu: str, pricing: PricingModel, region: str
) -> str | None:
    """Why ``planning`` rules an option out (GPU, pricing, region), or None when allowed."""
    planning = policy.planning
    if planning.allowed_gpus and gpu not in planning.allowed_gpus:
        return f"GPU {gpu} is not in planning.allowed_gpus ({', '.join(planning.allowed_gpus)})"
    if planning.allowed_pricing and pricing not in planning.allowed_pricing:
        allowed = ", ".join(p.value for p in planning.allowed_pricing)
        return f"pricing {pricing.value} is not in planning.allowed_pricing ({allowed})"
    if planning.allowed_regions and region not in planning.allowed_regions:
        allowed = ", ".join(planning.allowed_regions)
        return f"region {region} is not in planning.allowed_regions ({allowed})"
    return None


def budget_exclusion(
    policy: Policy,
    *,
    hourly_usd: Decimal | None,
    total_usd: Decimal | None = None,
    remaining_usd: Decimal | None = None,
) -> str | None:
    """Why ``budget`` makes an option infeasible, or None. ``remaining_usd``: this month."""
    cap = policy.budget.max_hourly_usd
    if cap is not None and hourly_usd is not None and hourly_usd > cap:
        return f"${hourly_usd}/h is above budget.max_hourly_usd (${cap}/h)"
    if remaining_usd is not None and total_usd is not None and total_usd > remaining_usd:
        return f"${total_usd:.2f} is above the remaining monthly budget (${remaining_usd:.2f})"
    return None
