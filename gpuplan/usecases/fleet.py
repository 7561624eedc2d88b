"""Survey the fleet: list GPU instances per provider scope, fetch utilisation, decide.

Each scope (an AWS region, a GCP project, an Azure subscription; built by
:func:`gpuplan.usecases.providers.build_fleet`) is listed and queried on its own: one
scope failing becomes a problem line and the others are still surveyed. Utilisation is
fetched in one batch per scope.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from gpuplan.core.budget import month_to_date_usd
from gpuplan.core.errors import GpuplanError, InputError
from gpuplan.core.fleet import GpuInstance, GpuSamples
from gpuplan.core.idle import (
    SNOOZE_TAG,
    IdleDecision,
    IdleRule,
    IdleVerdict,
    decide,
    format_tag_time,
    window_bounds,
)
from gpuplan.core.lifecycle import ActionRule
from gpuplan.core.offers import Provider
from gpuplan.core.policy import Policy
from gpuplan.providers.base import LifecycleProvider, ProviderError


@dataclass(frozen=True)
class Seen:
    """One instance as surveyed: who listed it, and the verdict."""

    instance: GpuInstance
    decision: IdleDecision
    provider: LifecycleProvider
    samples: GpuSamples | None = None
    """The utilisation the decision used (for charts); None when there was none."""


@dataclass
class Survey:
    seen: list[Seen] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def idle_rule(policy: Policy) -> IdleRule:
    idle = policy.idle
    return IdleRule(
        threshold_percent=idle.threshold_percent,
        window_minutes=idle.window_minutes,
        period_minutes=idle.period_minutes,
        min_coverage_percent=idle.min_coverage_percent,
        grace_minutes=idle.grace_minutes,
        exempt_tag=idle.exempt_tag,
        live_process_window_minutes=idle.live_process_window_minutes,
        gpu_memory_floor_percent=idle.gpu_memory_floor_percent,
        cpu_busy_percent=idle.cpu_busy_percent,
        match_labels=dict(policy.scope.match_labels),
    )


def action_rule(policy: Policy, provider: Provider) -> ActionRule:
    idle = policy.idle
    return ActionRule(
        action=idle.action.for_provider(provider),
        notice_minutes=idle.notice_minutes,
        allow_data_loss=idle.allow_data_loss,
        max_actions_per_run=idle.max_actions_per_run,
        reason_code=idle_rule(policy).code,
    )


def survey(
    providers: Sequence[LifecycleProvider],
    rule: IdleRule,
    now: datetime,
    instance_ids: Collection[str] | None = None,
) -> Survey:
    """List, fetch and decide for every scope; failures become problem lines.

    ``instance_ids`` narrows the survey to those instances (the TUI's "stop this one").
    """
    out = Survey()
    start, end = window_bounds(rule, now)
    for adapter in providers:
        try:
            instances = adapter.list_instances()
        except GpuplanError as exc:
            out.problems.append(listing_failed(adapter, exc.message))
            continue
        finally:
            out.notices.extend(adapter.drain_notices())
        if instance_ids is not None:
            instances = [i for i in instances if i.instance_id in instance_ids]
        samples, failure = fetch_samples(adapter, instances, start, end, rule)
        if failure:
            out.problems.append(failure)
        for inst in instances:
            d = decide_one(inst, samples, rule, now, failure)
            out.seen.append(Seen(inst, d, adapter, samples.get(inst.instance_id)))
    return out


def listing_failed(adapter: LifecycleProvider, message: str) -> str:
    """``<scope>: listing failed: <why>``, the scope named once."""
    why = message.removeprefix(f"{adapter.scope}: ")
    return f"{adapter.scope}: listing failed: {why}"


def fetch_samples(
    adapter: LifecycleProvider,
    instances: Sequence[GpuInstance],
    start: datetime,
    end: datetime,
    rule: IdleRule,
) -> tuple[Mapping[str, GpuSamples], str]:
    """Samples for the running instances (one batch), or a problem line."""
    running = [i for i in instances if i.state.bills_compute]
    try:
        return (
            adapter.fetch_utilisation(
                running, start=start, end=end, period_minutes=rule.period_minutes
            ),
            "",
        )
    except GpuplanError as exc:
        return {}, f"{adapter.scope}: GPU metrics unavailable: {exc.message}"


def decide_one(
    inst: GpuInstance,
    samples: Mapping[str, GpuSamples],
    rule: IdleRule,
    now: datetime,
    failure: str = "",
) -> IdleDecision:
    d = decide(
        samples.get(inst.instance_id),
        started_at=inst.started_at,
        labels=inst.labels,
        state=inst.state,
        rule=rule,
        now=now,
        gpu_count=inst.gpu_count,
        managed_by=inst.managed_by,
    )
    if failure and d.verdict is IdleVerdict.UNKNOWN:
        return IdleDecision(IdleVerdict.UNKNOWN, failure)
    return d


def fleet_records(seen: Survey, now: datetime) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for s in seen.seen:
        inst, d = s.instance, s.decision
        out.append(
            {
                "provider": inst.provider.value,
                "region": inst.region,
                "zone": inst.zone,
                "instance_id": inst.instance_id,
                "name": inst.name,
                "instance_type": inst.instance_type,
                "state": inst.state.value,
                "gpu": inst.gpu,
                "gpu_count": inst.gpu_count,
                "pricing": inst.pricing.value,
                "hourly_usd": inst.hourly_usd,
                "max_percent": d.max_percent,
                "mean_percent": d.mean_percent,
                "coverage_percent": d.coverage_percent,
                "gpu_memory_percent": d.memory_percent,
                "cpu_percent": d.cpu_percent,
                "idle_minutes": d.idle_minutes,
                "verdict": d.verdict.value,
                "reason": d.reason,
                "month_to_date_usd": month_to_date_usd(inst, inst.hourly_usd, now),
                "labels": dict(inst.labels),
            }
        )
    return out


def snooze(
    providers: Sequence[LifecycleProvider],
    instance_id: str,
    until: datetime | None,
    problems: Sequence[str] = (),
) -> GpuInstance:
    """Tag ``gpuplan-snooze-until`` (or remove it when ``until`` is None) on one instance.

    Raises InputError when every scope was listed and none has the instance, and
    ProviderError naming the scopes that could not be built or listed (``problems``,
    a credential error) when the instance may be in one of them.
    """
    trouble = list(problems)
    for adapter in providers:
        try:
            listed = adapter.list_instances()
        except GpuplanError as exc:
            trouble.append(listing_failed(adapter, exc.message))
            continue
        found = next((i for i in listed if i.instance_id == instance_id), None)
        if found is None:
            continue
        if until is None:
            adapter.untag(found, [SNOOZE_TAG])
        else:
            adapter.tag(found, {SNOOZE_TAG: format_tag_time(until)})
        return found
    if trouble:
        raise ProviderError(f"{instance_id}: not found; " + "; ".join(trouble))
    scopes = ", ".join(p.scope for p in providers) or "no scope"
    raise InputError(f"{instance_id}: not a GPU instance in the policy's scope ({scopes})")
