"""GCP's registry entry: its scope builder, actions, price and cost APIs, built from
its facts (:mod:`gpuplan.providers.gcp.facts`).

Scopes may be discovered: projects under folders, an organisation or with labels
(Resource Manager).

The builder reads the policy's ``scope.gcp`` (and ``idle.metrics.gcp``), builds one
adapter per scope with the metrics source passed to its constructor, and imports the
SDK only when called. It raises GpuplanError only when the cloud cannot be reached at
all (an unknown profile, no credential); a single scope that fails later fails on its
own, at listing. Discovered scopes come out sorted; a part of the tree that cannot be
read is a problem line in :class:`~gpuplan.providers.cloud_entry.ScopeAdapters`.
"""

from __future__ import annotations

from typing import Any

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
from gpuplan.providers.gcp import actions, prices
from gpuplan.providers.gcp import billing_export as bill
from gpuplan.providers.gcp import metrics_settings as native
from gpuplan.providers.gcp.bill_settings import GcpBill
from gpuplan.providers.gcp.facts import FACTS, GCP
from gpuplan.providers.gcp.scope import GcpScope


def gcp_scopes(context: BuildContext, *, credentials: Any = None) -> dict[str, CloudAdapter]:
    """One adapter per project; ``credentials``: Google credentials, None for ADC."""
    scope = section(context, GCP, GcpScope)
    from gpuplan.providers.gcp.clients import make_clients
    from gpuplan.providers.gcp.provider import GcpAdapter

    clients = make_clients(
        compute_endpoint=scope.compute_endpoint,
        monitoring_endpoint=scope.monitoring_endpoint,
        credentials=credentials,
    )
    found = _gcp_projects(scope, credentials)
    settings = metrics_settings(context.policy, GCP, native.GcpMetrics)
    return ScopeAdapters(
        {
            project: GcpAdapter(
                project,
                zones=scope.zones,
                metric_type=settings.metric_type,
                memory_type=settings.memory_used_type,
                cpu_type=settings.cpu_type,
                catalog=context.catalog,
                clients=clients,
                metrics=context.metrics,
            )
            for project in found.ids
        },
        found.problems,
    )


def _gcp_projects(scope: GcpScope, credentials: Any) -> FoundScopes:
    """The listed projects, or those Resource Manager finds (sorted, with problems)."""
    from gpuplan.providers.gcp import projects

    if not scope.discovers:
        return FoundScopes(list(dict.fromkeys(scope.projects)))
    manager = projects.make_resource_manager(scope.resource_manager_endpoint, credentials)
    return projects.discover(
        manager,
        parents=projects.parents_of(scope.folders, scope.organization),
        labels=scope.project_labels,
    )


ENTRY = CloudEntry(
    GCP,
    gcp_scopes,
    steps=actions.STEPS,
    catalog_file=FACTS.catalog_file,
    permission_file="deploy/gcp-custom-role.yaml",
    regions=FACTS.regions,
    local_storage=FACTS.local_storage,
    scope_section=GcpScope,
    title=FACTS.title,
    billing=FACTS.billing,
    prices=prices.fetch,
    price_source="Cloud Billing Catalog API",
    discoverer=prices.types,
    services={Service.LISTING: "compute", Service.METRICS: "monitoring"},
    nothing_found="scope discovered no projects (the folders or organisation hold no "
    "active project, or project_labels match none): nothing was surveyed",
    cost_sources=bill.bill_sources,
    cost_api="GCP billing export in BigQuery",
    metrics=native.METRICS,
    bill_keys=GcpBill,
    extra="gcp",
    sdk_modules=("google", "grpc", "proto"),
    account_kind="project",
    described=FACTS,
)
