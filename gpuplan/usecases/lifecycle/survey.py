"""Survey the fleet: list GPU instances per provider scope, fetch utilisation, decide.

Each scope (an AWS region, a GCP project, an Azure subscription; built by
:func:`gpuplan.usecases.clouds.adapters.build_adapters`) is listed and queried on its own: one
scope failing becomes a problem line and the others are still surveyed. Utilisation is
fetched in one batch per scope. Scopes are surveyed concurrently on a bounded pool
(:mod:`gpuplan.usecases.lifecycle.concurrency`, ``--concurrency``); instances, problems and
notices always come out in the scopes' order, the same as a serial survey.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from gpuplan.core.audit.budget import month_to_date_usd
from gpuplan.core.catalog.offers import Provider
from gpuplan.core.errors import GpuplanError, InputError
from gpuplan.core.lifecycle.faults import decide_with_faults, detect, fault_starts
from gpuplan.core.lifecycle.idle import (
    SNOOZE_TAG,
    IdleDecision,
    IdleRule,
    IdleVerdict,
    decide,
    format_tag_time,
    window_bounds,
)
from gpuplan.core.lifecycle.instances import GpuInstance, HostSamples
from gpuplan.core.lifecycle.plan import ActionRule, Step, plan_one
from gpuplan.core.lifecycle.workloads import unit_fields
from gpuplan.core.policy import Policy
from gpuplan.providers.base import CloudAdapter, ProviderError, StrandedReporter
from gpuplan.usecases.audit.exempt_report import exemption_record
from gpuplan.usecases.lifecycle.concurrency import SERIAL, Concurrency, Service


@dataclass(frozen=True)
class Seen:
    """One instance as surveyed: who listed it, and the verdict."""

    instance: GpuInstance
    decision: IdleDecision
    adapter: CloudAdapter
    samples: HostSamples | None = None
    """The samples the decision used (for charts); None when there was none."""


@dataclass
class Survey:
    seen: list[Seen] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    listed: list[str] = field(default_factory=list)
    """The scopes whose listing succeeded (what a run can reconcile against)."""


def idle_rule(policy: Policy) -> IdleRule:
    return policy.idle.rule(policy.scope.match_labels, exempt_max_days=policy.exemptions.max_days)


def action_rule(policy: Policy, provider: Provider) -> ActionRule:
    idle = policy.idle
    return ActionRule(
        action=idle.action.for_provider(provider),
        notice_minutes=idle.notice_minutes,
        allow_data_loss=idle.allow_data_loss,
        max_actions_per_run=idle.max_actions_per_run,
        breaker_percent=idle.breaker_percent,
        breaker_min_actions=idle.breaker_min_actions,
        reason_code=idle_rule(policy).code,
    )


def survey(
    providers: Sequence[CloudAdapter],
    rule: IdleRule,
    now: datetime,
    instance_ids: Collection[str] | None = None,
    *,
    concurrency: Concurrency = SERIAL,
    on_scope: Callable[[CloudAdapter, Survey], None] | None = None,
) -> Survey:
    """List, fetch and decide for every scope; failures become problem lines.

    ``instance_ids`` narrows the survey to those instances (the TUI's "stop this one").
    ``concurrency`` bounds how many scopes are surveyed at once; ``on_scope`` is called
    on the calling thread with each scope's part, in the scopes' order (progress).
    """
    out = Survey()
    start, end = fault_starts(rule, now)[0], window_bounds(rule, now)[1]

    def one(adapter: CloudAdapter) -> Survey:
        return survey_scope(adapter, rule, now, (start, end), instance_ids, concurrency)

    with concurrency.ordered(one, providers) as parts:
        for adapter, part in zip(providers, parts, strict=True):
            out.seen.extend(part.seen)
            out.problems.extend(part.problems)
            out.notices.extend(part.notices)
            out.listed.extend(part.listed)
            if on_scope is not None:
                on_scope(adapter, part)
    return judge_faults(out, rule, now)


def judge_faults(seen: Survey, rule: IdleRule, now: datetime) -> Survey:
    """Metric faults read across every scope at once (a step shared by several instances
    is a fleet-wide signature): suspect instances are judged without the suspect zeros
    and stay unknown while the fault lasts and through the recovery hold."""
    samples = {s.instance.instance_id: s.samples for s in seen.seen if s.samples is not None}
    suspects = detect(samples, rule, now)
    for n, s in enumerate(seen.seen):
        suspect = suspects.get(s.instance.instance_id)
        if suspect is not None:
            inst = s.instance
            decision = decide_with_faults(
                s.samples,
                suspect,
                started_at=inst.started_at,
                labels=inst.labels,
                state=inst.state,
                rule=rule,
                now=now,
                gpu_count=inst.gpu_count,
                managed_by=inst.managed_by,
            )
            seen.seen[n] = replace(s, decision=decision)
    return seen


def survey_scope(
    adapter: CloudAdapter,
    rule: IdleRule,
    now: datetime,
    window: tuple[datetime, datetime],
    instance_ids: Collection[str] | None = None,
    concurrency: Concurrency = SERIAL,
) -> Survey:
    """One scope: list, fetch its utilisation in one batch, decide; runs on a worker."""
    part = Survey()
    try:
        with concurrency.hold(adapter.provider, Service.LISTING):
            instances = adapter.list_instances()
    except GpuplanError as exc:
        part.problems.append(listing_failed(adapter, exc.message))
        return part
    finally:
        part.notices.extend(adapter.drain_notices())
    part.listed.append(adapter.scope)
    if instance_ids is not None:
        instances = [i for i in instances if i.instance_id in instance_ids]
    samples, failure = fetch_samples(adapter, instances, *window, rule, concurrency)
    if failure:
        part.problems.append(failure)
    for inst in instances:
        d = decide_one(inst, samples, rule, now, failure)
        part.seen.append(Seen(inst, d, adapter, samples.get(inst.instance_id)))
    return part


def listing_failed(adapter: CloudAdapter, message: str) -> str:
    """``<scope>: listing failed: <why>``, the scope named once."""
    why = message.removeprefix(f"{adapter.scope}: ")
    return f"{adapter.scope}: listing failed: {why}"


def fetch_samples(
    adapter: CloudAdapter,
    instances: Sequence[GpuInstance],
    start: datetime,
    end: datetime,
    rule: IdleRule,
    concurrency: Concurrency = SERIAL,
) -> tuple[Mapping[str, HostSamples], str]:
    """Samples for the running instances (one batch), or a problem line."""
    running = [i for i in instances if i.state.bills_compute]
    try:
        with concurrency.hold(adapter.provider, Service.METRICS):
            samples = adapter.fetch_utilisation(
                running, start=start, end=end, period_minutes=rule.period_minutes
            )
        return samples, ""
    except GpuplanError as exc:
        return {}, f"{adapter.scope}: GPU metrics unavailable: {exc.message}"


def decide_one(
    inst: GpuInstance,
    samples: Mapping[str, HostSamples],
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


def when_idle(policy: Policy, s: Seen, now: datetime) -> str | None:
    """Why the policy's action would skip this running instance once idle (data loss, a
    one-time spot, an action the cloud cannot do), or None when it would act."""
    if not s.instance.state.bills_compute:
        return None
    verdict = IdleDecision(IdleVerdict.IDLE, "")
    rule = replace(action_rule(policy, s.instance.provider), notice_minutes=0)
    item = plan_one(s.instance, verdict, rule, now, s.adapter.capabilities)
    return item.note if item.step is Step.SKIP else None


def fleet_records(
    seen: Survey, now: datetime, policy: Policy | None = None
) -> list[dict[str, object]]:
    """One record per instance; with ``policy``, ``skip`` says what ``stop-idle`` would
    leave running once the instance is idle, and why."""
    out: list[dict[str, object]] = []
    for s in seen.seen:
        inst, d = s.instance, s.decision
        skip = when_idle(policy, s, now) if policy is not None else None
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
                "metrics_suspect": d.suspect,
                "skip": skip,
                "month_to_date_usd": month_to_date_usd(inst, inst.hourly_usd, now),
                "labels": dict(inst.labels),
                "exemption": exemption_record(inst, policy, now) if policy else None,
                **unit_fields(inst.attributes),
            }
        )
    return out


def snooze(
    providers: Sequence[CloudAdapter],
    instance_id: str,
    until: datetime | None,
    problems: Sequence[str] = (),
    *,
    concurrency: Concurrency = SERIAL,
) -> GpuInstance:
    """Tag ``gpuplan-snooze-until`` (or remove it when ``until`` is None) on one instance.

    Scopes are listed concurrently and searched in their order; once the instance is
    found, scopes not yet listed are not asked. Raises InputError when every scope was
    listed and none has the instance, and ProviderError naming the scopes that could
    not be built or listed (``problems``, a credential error) when the instance may be
    in one of them.
    """
    trouble = list(problems)

    def listed(adapter: CloudAdapter) -> list[GpuInstance] | str:
        try:
            with concurrency.hold(adapter.provider, Service.LISTING):
                return adapter.list_instances()
        except GpuplanError as exc:
            return listing_failed(adapter, exc.message)

    with concurrency.ordered(listed, providers) as answers:
        for adapter, answer in zip(providers, answers, strict=True):
            if isinstance(answer, str):
                trouble.append(answer)
                continue
            found = next((i for i in answer if i.instance_id == instance_id), None)
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


def stranded_gpus(adapters: Sequence[CloudAdapter]) -> list[dict[str, object]]:
    """GPUs allocatable and requested by no workload, per node, from adapters that say so
    (Kubernetes); read after the survey listed them."""
    out: list[dict[str, object]] = []
    for adapter in adapters:
        if isinstance(adapter, StrandedReporter):
            out.extend(adapter.stranded_records())
    return out
