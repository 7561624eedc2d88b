"""AWS's registry entry: its scope builder, actions, price and cost APIs, built from
its facts (:mod:`gpuplan.providers.aws.facts`).

Scopes may be discovered: member accounts through Organizations (one adapter per
account and region, ``aws 111122223333/us-east-1``); a member role is assumed only when
its scope is first used.

The builder reads the policy's ``scope.aws`` (and ``idle.metrics.aws``), builds one
adapter per scope with the metrics source passed to its constructor, and imports the
SDK only when called. It raises GpuplanError only when the cloud cannot be reached at
all (an unknown profile, no credential); a single scope that fails later fails on its
own, at listing. Discovered scopes come out sorted; a part of the tree that cannot be
read is a problem line in :class:`~gpuplan.providers.cloud_entry.ScopeAdapters`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuplan.core.errors import InputError
from gpuplan.providers.aws import actions, prices
from gpuplan.providers.aws import cost_explorer as bill
from gpuplan.providers.aws import metrics_settings as native
from gpuplan.providers.aws.bill_settings import AwsBill
from gpuplan.providers.aws.facts import AWS, FACTS
from gpuplan.providers.aws.scope import AwsScope, OrgUnits
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
    from gpuplan.providers.aws.cloudwatch import MetricNames


def aws_scopes(context: BuildContext) -> dict[str, CloudAdapter]:
    """One adapter per region of ``scope.aws``; with ``accounts``, per account and region."""
    scope = section(context, AWS, AwsScope)
    from gpuplan.providers.aws.provider import AwsAdapter
    from gpuplan.providers.aws.session import make_session

    session = make_session(scope.profile, scope.role_arn)
    options: dict[str, Any] = {
        "catalog": context.catalog,
        "metric_names": aws_metric_names(metrics_settings(context.policy, AWS, native.AwsMetrics)),
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


def aws_metric_names(metrics: native.AwsMetrics) -> MetricNames:
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


ENTRY = CloudEntry(
    AWS,
    aws_scopes,
    steps=actions.STEPS,
    catalog_file=FACTS.catalog_file,
    permission_file="deploy/aws-iam-policy.json",
    regions=FACTS.regions,
    local_storage=FACTS.local_storage,
    scope_section=AwsScope,
    title=FACTS.title,
    billing=FACTS.billing,
    prices=prices.fetch,
    price_source="AWS Price List API + EC2 spot price history",
    discoverer=prices.types,
    services={Service.LISTING: "ec2", Service.METRICS: "cloudwatch"},
    nothing_found="scope discovered no accounts (an empty OU, or exclude_accounts covers "
    "every account): nothing was surveyed",
    cost_sources=bill.bill_sources,
    cost_api="AWS Cost Explorer",
    metrics=native.METRICS,
    bill_keys=AwsBill,
    extra="aws",
    sdk_modules=("boto3", "botocore"),
    account_kind="account",
    reservations="reserved instances",
    described=FACTS,
)
