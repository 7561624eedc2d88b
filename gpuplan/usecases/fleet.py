"""Survey the fleet: list GPU instances per provider scope, fetch utilisation, decide.

Each scope (an AWS region, later a GCP project or an Azure subscription) is listed and
queried on its own: one scope failing becomes a problem line and the others are still
surveyed. Utilisation is fetched in one batch per scope. SDKs load only inside
:func:`lifecycle_providers`, when a scope of that cloud is built.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from gpuplan.core.catalog import Catalog
from gpuplan.core.errors import GpuplanError, InputError
from gpuplan.core.fleet import Capability, GpuInstance, GpuSamples
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
from gpuplan.core.policy.models import AwsMetrics
from gpuplan.providers.base import CloudProvider, LifecycleProvider, ProviderError

if TYPE_CHECKING:
    from gpuplan.providers.aws.cloudwatch import MetricNames


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


def aws_metric_names(metrics: AwsMetrics) -> MetricNames:
    """The policy's CloudWatch metric names (``idle.metrics.aws``)."""
    from gpuplan.providers.aws.cloudwatch import MetricNames

    return MetricNames(
        namespace=metrics.namespace,
        utilisation=metrics.metric,
        memory_used=metrics.memory_used_metric,
        memory_total=metrics.memory_total_metric,
        cpu_namespace=metrics.cpu_namespace,
        cpu=metrics.cpu_metric,
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


def lifecycle_providers(
    policy: Policy, catalog: Catalog | None
) -> tuple[list[LifecycleProvider], list[str]]:
    """One adapter per scope of the policy (AWS: per region); problem lines for the rest.

    ``GPUPLAN_FAKE_FLEET=path.json`` replaces every cloud with the in-memory fake (a demo
    and test hook, as for ``gpuplan budget``).
    """
    import os

    from gpuplan.usecases.providers import FAKE_FLEET_ENV

    fake_path = os.environ.get(FAKE_FLEET_ENV)
    if fake_path:
        from gpuplan.providers.fake import fake_providers

        return list(fake_providers(fake_path, policy.scope.providers)), []
    adapters: list[LifecycleProvider] = []
    problems: list[str] = []
    aws = policy.scope.aws
    if aws is not None:
        from gpuplan.providers.aws.provider import AwsProvider
        from gpuplan.providers.aws.session import make_session

        metrics = policy.idle.metrics.aws
        try:
            session = make_session(aws.profile, aws.role_arn)
            for region in aws.regions:
                adapters.append(
                    AwsProvider.from_session(
                        session,
                        region,
                        catalog=catalog,
                        metric_names=aws_metric_names(metrics),
                    )
                )
        except GpuplanError as exc:
            problems.append(exc.message)
    from gpuplan.usecases.cloud_adapters import lifecycle_scopes, with_metrics_source

    adapters = [with_metrics_source(policy, a) for a in adapters]
    for other in (p for p in policy.scope.providers if p is not Provider.AWS):
        more, trouble = lifecycle_scopes(policy, other, catalog)
        adapters.extend(more)
        problems.extend(trouble)
    return adapters, problems


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
            out.problems.append(f"{adapter.scope}: listing failed: {exc.message}")
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


def month_to_date_usd(inst: GpuInstance, now: datetime) -> Decimal | None:
    """Hours running since the later of month start and the last start, x $/h."""
    if inst.hourly_usd is None or not inst.state.bills_compute or inst.started_at is None:
        return None if inst.hourly_usd is None else Decimal(0)
    month_start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    since = max(inst.started_at, month_start)
    hours = Decimal(max((now - since).total_seconds(), 0) / 3600).quantize(Decimal("0.01"))
    return (hours * inst.hourly_usd).quantize(Decimal("0.01"))


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
                "month_to_date_usd": month_to_date_usd(inst, now),
                "labels": dict(inst.labels),
            }
        )
    return out


def snooze(
    providers: Sequence[LifecycleProvider], instance_id: str, until: datetime | None
) -> GpuInstance:
    """Tag ``gpuplan-snooze-until`` (or remove it when ``until`` is None) on one instance.

    Raises InputError when no scope lists the instance, ProviderError when tagging fails.
    """
    for adapter in providers:
        found = next((i for i in adapter.list_instances() if i.instance_id == instance_id), None)
        if found is None:
            continue
        if until is None:
            adapter.untag(found, [SNOOZE_TAG])
        else:
            adapter.tag(found, {SNOOZE_TAG: format_tag_time(until)})
        return found
    scopes = ", ".join(p.scope for p in providers) or "no scope"
    raise InputError(f"{instance_id}: not a GPU instance in the policy's scope ({scopes})")


class AwsRegions:
    """Every AWS region of a policy as one listing adapter (``gpuplan budget``'s shape).

    Listing only; a region that fails fails the whole listing, because a partial list
    would understate the month's spend. The lifecycle manager uses
    :func:`lifecycle_providers` instead (one adapter per region, acting included).
    """

    def __init__(self, regions: Sequence[LifecycleProvider]) -> None:
        self._regions = list(regions)

    @property
    def provider(self) -> Provider:
        return Provider.AWS

    @property
    def capabilities(self) -> frozenset[Capability]:
        return frozenset({Capability.LIST})

    def list_instances(self) -> list[GpuInstance]:
        out: list[GpuInstance] = []
        failed: list[str] = []
        for region in self._regions:
            try:
                out.extend(region.list_instances())
            except GpuplanError as exc:
                failed.append(exc.message)
        if failed:
            raise ProviderError("; ".join(failed))
        return out


def aws_from_policy(policy: Policy) -> CloudProvider:
    """The registry factory for AWS (``registry.register(Provider.AWS, aws_from_policy)``)."""
    from gpuplan.loaders.catalog import load_catalog

    try:
        catalog: Catalog | None = load_catalog()
    except GpuplanError:
        catalog = None
    policy_aws_only = policy.model_copy(
        update={"scope": policy.scope.model_copy(update={"gcp": None, "azure": None})}
    )
    adapters, problems = lifecycle_providers(policy_aws_only, catalog)
    if problems:
        raise ProviderError("; ".join(problems))
    return AwsRegions(adapters)
