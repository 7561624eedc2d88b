"""The built-in registry entries: AWS, GCP, Azure and the in-memory fake.

Each :class:`~gpuplan.providers.cloud_entry.CloudEntry` below is everything about its
cloud (scope builder, actions and refusals, catalog file and region naming from
:mod:`gpuplan.core.clouds`, price fetcher and type listing from
:mod:`gpuplan.usecases.clouds.prices`, service names, permission file); the builders
follow.

Each builder reads its cloud's section of the policy (``scope.aws``, ``scope.gcp``,
``scope.azure``, and ``idle.metrics.<cloud>``), builds one adapter per scope (region,
project, subscription) with the metrics source passed to its constructor, and imports
the cloud SDK only when called. A builder raises GpuplanError only when the cloud
cannot be reached at all (an unknown profile, no credential); a single scope that
fails later fails on its own, at listing.

Scopes may be discovered rather than listed: AWS member accounts through Organizations
(one adapter per account and region, ``aws 111122223333/us-east-1``), GCP projects
under folders, an organisation or with labels (Resource Manager), Azure subscriptions
that the identity can read or under management groups. Discovered scopes come out
sorted; a part of the tree that cannot be read is a problem line in :class:`ScopeAdapters`.
Discovery is serial and happens once per run, before the survey; an AWS member role
is assumed only when its scope is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from gpuplan.core import clouds
from gpuplan.core.catalog.offers import Provider
from gpuplan.core.errors import InputError
from gpuplan.core.lifecycle.actions import Call, one
from gpuplan.core.lifecycle.instances import ACTING
from gpuplan.core.lifecycle.simulation.traces import PriceList
from gpuplan.providers.aws import actions as aws_actions
from gpuplan.providers.aws import cost_explorer as aws_bill
from gpuplan.providers.aws import metrics_settings as aws_metrics
from gpuplan.providers.aws import prices as aws_prices
from gpuplan.providers.aws.bill_settings import AwsBill
from gpuplan.providers.aws.scope import AwsScope, OrgUnits
from gpuplan.providers.azure import actions as azure_actions
from gpuplan.providers.azure import cost_management as azure_bill
from gpuplan.providers.azure import metrics_settings as azure_metrics
from gpuplan.providers.azure import prices as azure_prices
from gpuplan.providers.azure.scope import AzureScope
from gpuplan.providers.base import CloudAdapter
from gpuplan.providers.cloud_entry import (
    FAKE_FLEET_ENV,
    BuildContext,
    CloudEntry,
    ScopeAdapters,
    Service,
    catalog_entry,
)
from gpuplan.providers.found import FoundScopes
from gpuplan.providers.gcp import actions as gcp_actions
from gpuplan.providers.gcp import billing_export as gcp_bill
from gpuplan.providers.gcp import metrics_settings as gcp_metrics
from gpuplan.providers.gcp import prices as gcp_prices
from gpuplan.providers.gcp.bill_settings import GcpBill
from gpuplan.providers.gcp.scope import GcpScope
from gpuplan.usecases.clouds import prices as cloud_prices
from gpuplan.usecases.clouds.kubernetes import ENTRY as KUBERNETES

if TYPE_CHECKING:
    from gpuplan.core.policy import Policy
    from gpuplan.providers.aws.cloudwatch import MetricNames
    from gpuplan.providers.azure.metrics import MetricNames as AzureMetricNames

_S = TypeVar("_S", AwsScope, GcpScope, AzureScope)
_M = TypeVar("_M", bound=BaseModel)


def _section(context: BuildContext, provider: Provider, model: type[_S]) -> _S:
    """The policy's ``scope.<provider>``, as its entry's model checked it."""
    section = context.policy.scope.section(provider)
    if not isinstance(section, model):
        raise InputError(f"the policy has no scope.{provider.value} section")
    return section


def _metrics(policy: Policy, provider: Provider, model: type[_M]) -> _M:
    """The policy's ``idle.metrics.<provider>`` (its defaults when the file omits it)."""
    section = policy.idle.metrics.section(provider.value)
    return section if isinstance(section, model) else model()


def aws_scopes(context: BuildContext) -> dict[str, CloudAdapter]:
    """One adapter per region of ``scope.aws``; with ``accounts``, per account and region."""
    scope = _section(context, Provider.AWS, AwsScope)
    from gpuplan.providers.aws.provider import AwsAdapter
    from gpuplan.providers.aws.session import make_session

    session = make_session(scope.profile, scope.role_arn)
    options: dict[str, Any] = {
        "catalog": context.catalog,
        "metric_names": aws_metric_names(
            _metrics(context.policy, Provider.AWS, aws_metrics.AwsMetrics)
        ),
        "metrics": context.metrics,
    }
    if scope.accounts is None:
        return {
            region: AwsAdapter.from_session(session, region, **options) for region in scope.regions
        }
    return _member_scopes(session, scope, options)


def _member_scopes(session: Any, scope: AwsScope, options: dict[str, Any]) -> ScopeAdapters:
    """One adapter per (member account, region), accounts sorted, regions as listed."""
    from gpuplan.providers.aws import organizations as orgs
    from gpuplan.providers.aws.provider import AwsAdapter
    from gpuplan.providers.aws.session import MemberSessions, client_config

    home = scope.regions[0]
    config = client_config()
    found = FoundScopes()
    if scope.accounts == "all":
        org = session.client("organizations", region_name=home, config=config)
        found.ids = orgs.all_accounts(org)
    elif isinstance(scope.accounts, OrgUnits):
        org = session.client("organizations", region_name=home, config=config)
        found = orgs.accounts_under(org, scope.accounts.ous)
    elif scope.accounts is not None:
        found.ids = sorted(set(scope.accounts))
    partition = session.get_partition_for_region(home)
    if scope.role_name is None:
        raise InputError("scope.aws.accounts needs role_name")
    members = MemberSessions(session.client("sts", region_name=home, config=config), scope.profile)
    out = ScopeAdapters(problems=found.problems)
    for account in (a for a in found.ids if a not in scope.exclude_accounts):
        member = members.session(orgs.member_role_arn(partition, account, scope.role_name))
        for region in scope.regions:
            out[f"{account}/{region}"] = AwsAdapter.from_session(
                member, region, account=account, **options
            )
    return out


def aws_metric_names(metrics: aws_metrics.AwsMetrics) -> MetricNames:
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


def gcp_scopes(context: BuildContext, *, credentials: Any = None) -> dict[str, CloudAdapter]:
    """One adapter per project; ``credentials``: Google credentials, None for ADC."""
    scope = _section(context, Provider.GCP, GcpScope)
    from gpuplan.providers.gcp.clients import make_clients
    from gpuplan.providers.gcp.provider import GcpAdapter

    clients = make_clients(
        compute_endpoint=scope.compute_endpoint,
        monitoring_endpoint=scope.monitoring_endpoint,
        credentials=credentials,
    )
    found = _gcp_projects(scope, credentials)
    settings = _metrics(context.policy, Provider.GCP, gcp_metrics.GcpMetrics)
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


def azure_metric_names(policy: Policy) -> AzureMetricNames:
    """The policy's Azure Monitor metric names (``idle.metrics.azure``)."""
    from gpuplan.providers.azure.metrics import MetricNames

    m = _metrics(policy, Provider.AZURE, azure_metrics.AzureMetrics)
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
    scope = _section(context, Provider.AZURE, AzureScope)
    from gpuplan.providers.azure.provider import AzureAdapter, default_credential

    settings = _metrics(context.policy, Provider.AZURE, azure_metrics.AzureMetrics)
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


def fake_scopes(context: BuildContext) -> dict[str, CloudAdapter]:
    """Every cloud of the policy from the ``GPUPLAN_FAKE_FLEET`` file, one fake each."""
    from gpuplan.providers.fake import fake_providers

    path = context.environ[FAKE_FLEET_ENV]
    return {f.scope: f for f in fake_providers(path, context.policy.scope.providers)}


ENTRIES = (
    CloudEntry(
        Provider.AWS,
        aws_scopes,
        steps=aws_actions.STEPS,
        catalog_file=clouds.AWS.catalog_file,
        permission_file="deploy/aws-iam-policy.json",
        regions=clouds.AWS.regions,
        local_storage=clouds.AWS.local_storage,
        scope_section=AwsScope,
        title=clouds.AWS.title,
        billing=clouds.AWS.billing,
        prices=aws_prices.fetch,
        price_source="AWS Price List API + EC2 spot price history",
        discoverer=aws_prices.types,
        services={Service.LISTING: "ec2", Service.METRICS: "cloudwatch"},
        nothing_found="scope discovered no accounts (an empty OU, or exclude_accounts covers "
        "every account): nothing was surveyed",
        cost_sources=aws_bill.bill_sources,
        cost_api="AWS Cost Explorer",
        metrics=aws_metrics.METRICS,
        bill_keys=AwsBill,
        extra="aws",
        sdk_modules=("boto3", "botocore"),
        account_kind="account",
        reservations="reserved instances",
    ),
    CloudEntry(
        Provider.GCP,
        gcp_scopes,
        steps=gcp_actions.STEPS,
        catalog_file=clouds.GCP.catalog_file,
        permission_file="deploy/gcp-custom-role.yaml",
        regions=clouds.GCP.regions,
        local_storage=clouds.GCP.local_storage,
        scope_section=GcpScope,
        title=clouds.GCP.title,
        billing=clouds.GCP.billing,
        prices=gcp_prices.fetch,
        price_source="Cloud Billing Catalog API",
        discoverer=gcp_prices.types,
        services={Service.LISTING: "compute", Service.METRICS: "monitoring"},
        nothing_found="scope discovered no projects (the folders or organisation hold no "
        "active project, or project_labels match none): nothing was surveyed",
        cost_sources=gcp_bill.bill_sources,
        cost_api="GCP billing export in BigQuery",
        metrics=gcp_metrics.METRICS,
        bill_keys=GcpBill,
        extra="gcp",
        sdk_modules=("google", "grpc", "proto"),
        account_kind="project",
    ),
    CloudEntry(
        Provider.AZURE,
        azure_scopes,
        steps=azure_actions.STEPS,
        catalog_file=clouds.AZURE.catalog_file,
        permission_file="deploy/azure-role-definition.json",
        regions=clouds.AZURE.regions,
        local_storage=clouds.AZURE.local_storage,
        scope_section=AzureScope,
        title=clouds.AZURE.title,
        prices=azure_prices.fetch,
        price_source="Azure Retail Prices API",
        discoverer=azure_prices.types,
        services={Service.LISTING: "compute", Service.METRICS: "monitor"},
        nothing_found="scope discovered no subscriptions (the management groups hold none "
        "the identity can read): nothing was surveyed",
        cost_sources=azure_bill.bill_sources,
        cost_api="Azure Cost Management",
        metrics=azure_metrics.METRICS,
        extra="azure",
        sdk_modules=("azure", "msal"),
        account_kind="subscription",
    ),
    catalog_entry(
        clouds.LAMBDA,
        prices=cloud_prices.lambda_prices,
        price_source="Lambda Cloud API instance-types",
    ),
    catalog_entry(clouds.COREWEAVE),
    catalog_entry(clouds.NEBIUS),
    catalog_entry(clouds.CRUSOE),
    catalog_entry(
        clouds.RUNPOD, prices=cloud_prices.runpod_prices, price_source="RunPod GraphQL API"
    ),
    catalog_entry(
        clouds.VAST,
        prices=cloud_prices.vast_prices,
        price_source="Vast.ai offer search (median of verified offers)",
    ),
    KUBERNETES,
)
"""The built-in clouds: the big three, then the GPU clouds priced and planned but not
managed (:func:`~gpuplan.providers.cloud_entry.catalog_entry`), then Kubernetes (GPU
workloads priced from their nodes' clouds);
:mod:`gpuplan.usecases.clouds.registry` adds any registered later."""

TRACE_PRICES = PriceList(Provider.AWS, "us-east-1")
"""Where trace folders' instances (no cloud or region of their own) and the simulator's
seeded fleet are priced: AWS us-east-1 on-demand, else the lowest on-demand price the
catalog has for the type (``gpuplan audit --traces``, ``gpuplan simulate``)."""

FAKE_ENTRY = CloudEntry(
    Provider.AWS,
    fake_scopes,
    steps={action: one(Call(action.value), "in memory") for action in ACTING},
    catalog_file="",
    permission_file="",
)
"""The in-memory fake standing in for every cloud (``GPUPLAN_FAKE_FLEET``)."""
