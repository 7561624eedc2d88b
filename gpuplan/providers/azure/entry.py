"""Azure's registry entry: its scope builder, actions, price and cost APIs, built from
its facts (:mod:`gpuplan.providers.azure.facts`).

Scopes may be discovered: subscriptions the identity can read, or those under
management groups.

The builder reads the policy's ``scope.azure`` (and ``idle.metrics.azure``), builds one
adapter per scope with the metrics source passed to its constructor, and imports the
SDK only when called. It raises GpuplanError only when the cloud cannot be reached at
all (an unknown profile, no credential); a single scope that fails later fails on its
own, at listing. Discovered scopes come out sorted; a part of the tree that cannot be
read is a problem line in :class:`~gpuplan.providers.cloud_entry.ScopeAdapters`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuplan.providers.azure import actions, prices
from gpuplan.providers.azure import cost_management as bill
from gpuplan.providers.azure import metrics_settings as native
from gpuplan.providers.azure.facts import AZURE, FACTS
from gpuplan.providers.azure.scope import AzureScope
from gpuplan.providers.base import CloudAdapter
from gpuplan.providers.cloud_entry import (
    BuildContext,
    CloudEntry,
    ScopeAdapters,
    Service,
    metrics_settings,
    section,
)
from gpuplan.providers.found import FoundScopes

if TYPE_CHECKING:
    from gpuplan.core.policy import Policy
    from gpuplan.providers.azure.metrics import MetricNames as AzureMetricNames


def azure_metric_names(policy: Policy) -> AzureMetricNames:
    """The policy's Azure Monitor metric names (``idle.metrics.azure``)."""
    from gpuplan.providers.azure.metrics import MetricNames

    m = metrics_settings(policy, AZURE, native.AzureMetrics)
    return MetricNames(
        namespace=m.namespace,
        utilisation=m.metric,
        memory_used=m.memory_used_metric,
        memory_total=m.memory_total_metric,
        cpu=m.cpu_metric,
    )


def azure_scopes(context: BuildContext, *, credential: Any = None) -> dict[str, CloudAdapter]:
    """One adapter per subscription of ``scope.azure`` (listed or discovered);
    ``credential``: an Azure token credential, None for the standard chain."""
    scope = section(context, AZURE, AzureScope)
    from gpuplan.providers.azure.provider import AzureAdapter, default_credential

    settings = metrics_settings(context.policy, AZURE, native.AzureMetrics)
    credential = credential or default_credential(context.environ)
    found = _azure_subscriptions(scope, credential)
    return ScopeAdapters(
        {
            subscription: AzureAdapter(
                subscription,
                resource_groups=scope.resource_groups,
                namespace=settings.namespace,
                metric=settings.metric,
                metric_names=azure_metric_names(context.policy),
                catalog=context.catalog,
                credential=credential,
                arm_endpoint=scope.arm_endpoint,
                metrics_endpoint=scope.metrics_endpoint,
                metrics=context.metrics,
            )
            for subscription in found.ids
        },
        found.problems,
    )


def _azure_subscriptions(scope: AzureScope, credential: Any) -> FoundScopes:
    """The listed subscriptions, or those the identity reads (sorted, with problems)."""
    from gpuplan.providers.azure.provider import PUBLIC_ARM
    from gpuplan.providers.azure.subscriptions import discover

    if isinstance(scope.subscriptions, list):
        return FoundScopes(list(dict.fromkeys(scope.subscriptions)))
    return discover(
        credential,
        arm_endpoint=(scope.arm_endpoint or PUBLIC_ARM).rstrip("/"),
        management_groups=scope.management_groups,
    )


ENTRY = CloudEntry(
    AZURE,
    azure_scopes,
    steps=actions.STEPS,
    catalog_file=FACTS.catalog_file,
    permission_file="deploy/azure-role-definition.json",
    regions=FACTS.regions,
    local_storage=FACTS.local_storage,
    scope_section=AzureScope,
    title=FACTS.title,
    prices=prices.fetch,
    price_source="Azure Retail Prices API",
    discoverer=prices.types,
    services={Service.LISTING: "compute", Service.METRICS: "monitor"},
    nothing_found="scope discovered no subscriptions (the management groups hold none "
    "the identity can read): nothing was surveyed",
    cost_sources=bill.bill_sources,
    cost_api="Azure Cost Management",
    metrics=native.METRICS,
    extra="azure",
    sdk_modules=("azure", "msal"),
    account_kind="subscription",
    described=FACTS,
)
