"""Registry factories for GCP and Azure, and Prometheus as every cloud's metrics source.

Each factory reads its section of the policy (``scope.gcp``, ``scope.azure``,
``idle.metrics``), builds one adapter per project or subscription behind a
:class:`~gpuplan.providers.scopes.ScopeSet`, and imports the cloud SDK only when called.
When ``idle.metrics.prometheus`` is set, utilisation comes from that Prometheus for
every provider (:func:`with_metrics_source`); listing and actions stay with the cloud.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from gpuplan.core.catalog import Catalog
from gpuplan.core.errors import GpuplanError, InputError
from gpuplan.core.offers import Provider
from gpuplan.core.policy import IdleAction, Policy
from gpuplan.providers.base import CloudProvider, LifecycleProvider

if TYPE_CHECKING:
    from gpuplan.providers.azure.metrics import MetricNames as AzureMetricNames


@functools.cache
def _catalog() -> Catalog | None:
    """The bundled catalog (GPU facts and prices); None when it cannot be read."""
    from gpuplan.loaders.catalog import load_catalog

    try:
        return load_catalog()
    except GpuplanError:
        return None


def with_metrics_source(policy: Policy, adapter: LifecycleProvider) -> LifecycleProvider:
    """``adapter`` itself, or wrapped so its utilisation comes from Prometheus."""
    settings = policy.idle.metrics.prometheus
    if settings is None:
        return adapter
    from gpuplan.providers.prometheus import PrometheusSource, WithPrometheus

    source = PrometheusSource(
        settings.url,
        metric=settings.metric,
        instance_label=settings.instance_label,
        memory_used_metric=settings.memory_used_metric,
        memory_free_metric=settings.memory_free_metric,
        cpu_metric=settings.cpu_metric,
    )
    return WithPrometheus(adapter, source)


def gcp_from_policy(policy: Policy) -> CloudProvider:
    """All projects of ``scope.gcp`` as one adapter (the registry's shape)."""
    from gpuplan.providers.scopes import ScopeSet

    members = gcp_scopes(policy, _catalog())
    return with_metrics_source(policy, ScopeSet(Provider.GCP, members))


def azure_from_policy(policy: Policy) -> CloudProvider:
    """All subscriptions of ``scope.azure`` as one adapter (the registry's shape)."""
    from gpuplan.providers.scopes import ScopeSet

    members = azure_scopes(policy, _catalog())
    return with_metrics_source(policy, ScopeSet(Provider.AZURE, members))


def lifecycle_scopes(
    policy: Policy, provider: Provider, catalog: Catalog | None
) -> tuple[list[LifecycleProvider], list[str]]:
    """One adapter per GCP project or Azure subscription (the fleet survey's shape),
    with the Prometheus source applied; a problem line when the cloud cannot be built."""
    build = {Provider.GCP: gcp_scopes, Provider.AZURE: azure_scopes}.get(provider)
    if build is None:
        return [], [f"{provider.value}: no adapter in gpuplan.usecases.cloud_adapters"]
    try:
        members = build(policy, catalog)
    except GpuplanError as exc:
        return [], [f"{provider.value}: {exc.message}"]
    return [with_metrics_source(policy, m) for m in members.values()], []


def gcp_scopes(
    policy: Policy, catalog: Catalog | None, *, credentials: Any = None
) -> dict[str, LifecycleProvider]:
    """One adapter per project; ``credentials``: Google credentials, None for ADC."""
    scope = policy.scope.gcp
    if scope is None:
        raise InputError("the policy has no scope.gcp section")
    from gpuplan.providers.gcp.clients import make_clients
    from gpuplan.providers.gcp.provider import GcpProvider

    clients = make_clients(
        compute_endpoint=scope.compute_endpoint,
        monitoring_endpoint=scope.monitoring_endpoint,
        credentials=credentials,
    )
    return {
        project: GcpProvider(
            project,
            zones=scope.zones,
            metric_type=policy.idle.metrics.gcp.metric_type,
            memory_type=policy.idle.metrics.gcp.memory_used_type,
            cpu_type=policy.idle.metrics.gcp.cpu_type,
            catalog=catalog,
            clients=clients,
            # The stop-idle executor calls stop() for every stopping action; GCP's
            # suspend is carried out by the adapter when the policy asks for it.
            suspend_on_stop=policy.idle.action is IdleAction.SUSPEND,
        )
        for project in scope.projects
    }


def azure_metric_names(policy: Policy) -> AzureMetricNames:
    """The policy's Azure Monitor metric names (``idle.metrics.azure``)."""
    from gpuplan.providers.azure.metrics import MetricNames

    m = policy.idle.metrics.azure
    return MetricNames(
        namespace=m.namespace,
        utilisation=m.metric,
        memory_used=m.memory_used_metric,
        memory_total=m.memory_total_metric,
        cpu=m.cpu_metric,
    )


def azure_scopes(policy: Policy, catalog: Catalog | None) -> dict[str, LifecycleProvider]:
    scope = policy.scope.azure
    if scope is None:
        raise InputError("the policy has no scope.azure section")
    from gpuplan.providers.azure.provider import AzureProvider, default_credential

    credential = default_credential()
    return {
        subscription: AzureProvider(
            subscription,
            resource_groups=scope.resource_groups,
            namespace=policy.idle.metrics.azure.namespace,
            metric=policy.idle.metrics.azure.metric,
            metric_names=azure_metric_names(policy),
            catalog=catalog,
            credential=credential,
            arm_endpoint=scope.arm_endpoint,
            metrics_endpoint=scope.metrics_endpoint,
        )
        for subscription in scope.subscriptions
    }
