"""AWS actual spend through Cost Explorer ``GetCostAndUsage`` (boto3 ``ce``), daily.

Two paged requests per range, so that no dollar is counted twice:

1. usage-like record types (``Usage``, ``SavingsPlanCoveredUsage``,
   ``DiscountedUsage``), grouped by the team tag and the usage type, with
   ``UnblendedCost`` and ``UsageQuantity``: instance time per type (``BoxUsage:TYPE``,
   ``SpotUsage:TYPE``, hours), disks (``EBS:``), the rest;
2. every other record type (``SavingsPlanNegation``, ``SavingsPlanRecurringFee``,
   ``RIFee``, ``Credit``, ``Discount``, ``EdpDiscount``, ``Tax`` ...), grouped by record
   type and usage type: Savings Plan coverage per instance type, discounts, fees.

Each request is billed by AWS (USD 0.01). Cost Explorer is about a day behind and marks
days it may still revise as ``Estimated``. At organisation scale, CUR 2.0 through Data
Exports (Parquet in S3) is the scalable path (docs/bill.md). Errors leave as
:class:`ProviderError` naming the call, never the credentials.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import date
from typing import TYPE_CHECKING, Any

from gpuplan.core.audit.bill.lines import CostKind, CostLine, checked_usd
from gpuplan.providers.base import ProviderError

if TYPE_CHECKING:
    from pydantic import BaseModel

    from gpuplan.core.policy.bill_settings import BillSettings
    from gpuplan.providers.billing.base import CostSource

USAGE_RECORDS = ("Usage", "SavingsPlanCoveredUsage", "DiscountedUsage")
COMMITMENT_RECORDS = {"SavingsPlanNegation", "SavingsPlanRecurringFee", "SavingsPlanUpfrontFee",
                      "RIFee", "SavingsPlanCoveredUsage"}  # fmt: skip
DISCOUNT_RECORDS = {"Credit", "Discount", "BundledDiscount", "EdpDiscount", "PrivateRateDiscount",
                    "DistributorDiscount", "Refund"}  # fmt: skip
PERMISSIONS = ("ce:GetCostAndUsage", "sts:GetCallerIdentity")
MAX_PAGES = 100
_INSTANCE = re.compile(r"(?:^|-)(?:BoxUsage|SpotUsage|DedicatedUsage|HostUsage):([a-z0-9.-]+)$")
_DISK = re.compile(r"(?:^|-)EBS(?:Optimized)?:|SnapshotUsage|VolumeUsage|VolumeP-IOPS")


def instance_type_of(usage_type: str) -> str:
    """``USE1-BoxUsage:p4d.24xlarge`` -> ``p4d.24xlarge``; "" when not instance time."""
    match = _INSTANCE.search(usage_type)
    return match.group(1) if match else ""


def kind_of(record_type: str, usage_type: str) -> CostKind:
    if record_type in DISCOUNT_RECORDS:
        return CostKind.DISCOUNT
    if record_type in COMMITMENT_RECORDS - {"SavingsPlanCoveredUsage"}:
        return CostKind.COMMITMENT
    if instance_type_of(usage_type):
        return CostKind.INSTANCE
    if _DISK.search(usage_type) and "EBSOptimized" not in usage_type:
        return CostKind.DISK
    return CostKind.OTHER


class CostExplorerSource:
    """The bill of the account the credentials belong to (all linked accounts when it is
    the management account), read through Cost Explorer."""

    provider = "aws"
    permissions: tuple[str, ...] = PERMISSIONS

    def __init__(self, session: Any, scope: str | None = None) -> None:
        from gpuplan.providers.aws.session import client_config

        # Cost Explorer has one endpoint, in us-east-1 (AWS_ENDPOINT_URL still wins).
        self._ce = session.client("ce", region_name="us-east-1", config=client_config())
        self._session = session
        self._scope = scope

    @property
    def scope(self) -> str:
        if self._scope is None:
            from botocore.exceptions import BotoCoreError, ClientError

            try:
                sts = self._session.client("sts", region_name="us-east-1")
                self._scope = str(sts.get_caller_identity()["Account"])
            except (BotoCoreError, ClientError) as exc:
                raise ProviderError(f"aws: cannot tell the account: {_reason(exc)}") from None
        return self._scope

    def daily_costs(self, since: date, until: date, team_label: str) -> list[CostLine]:
        scope = self.scope
        period = {"Start": since.isoformat(), "End": until.isoformat()}
        usage = {"Dimensions": {"Key": "RECORD_TYPE", "Values": list(USAGE_RECORDS)}}
        lines: list[CostLine] = []
        for day, final, keys, metrics in self._groups(
            TimePeriod=period, Granularity="DAILY", Filter=usage,
            Metrics=["UnblendedCost", "UsageQuantity"],
            GroupBy=[{"Type": "TAG", "Key": team_label},
                     {"Type": "DIMENSION", "Key": "USAGE_TYPE"}],
        ):  # fmt: skip
            team = keys[0].partition("$")[2]
            usage_type = keys[1]
            kind = kind_of("Usage", usage_type)
            itype = instance_type_of(usage_type)
            hours = _amount(metrics, "UsageQuantity") if kind is CostKind.INSTANCE else None
            lines.append(CostLine("aws", scope, day, kind, _amount(metrics, "UnblendedCost"),
                                  itype, team, usage_type[:120], hours, final))  # fmt: skip
        for day, final, keys, metrics in self._groups(
            TimePeriod=period, Granularity="DAILY", Filter={"Not": usage},
            Metrics=["UnblendedCost"],
            GroupBy=[{"Type": "DIMENSION", "Key": "RECORD_TYPE"},
                     {"Type": "DIMENSION", "Key": "USAGE_TYPE"}],
        ):  # fmt: skip
            record, usage_type = keys
            kind = kind_of(record, usage_type)
            itype = instance_type_of(usage_type) if kind is CostKind.COMMITMENT else ""
            item = f"{record}/{usage_type}"[:120]
            usd = _amount(metrics, "UnblendedCost")
            lines.append(CostLine("aws", scope, day, kind, usd, itype, "", item, None, final))
        return [line for line in lines if line.usd or line.hours]

    def _groups(self, **request: Any) -> Iterator[tuple[date, bool, list[str], dict[str, Any]]]:
        from botocore.exceptions import BotoCoreError, ClientError

        token: str | None = None
        for _ in range(MAX_PAGES):
            call = dict(request, NextPageToken=token) if token else request
            try:
                page = self._ce.get_cost_and_usage(**call)
            except (BotoCoreError, ClientError) as exc:
                raise ProviderError(f"aws: Cost Explorer GetCostAndUsage: {_reason(exc)}") from None
            for result in page.get("ResultsByTime", []):
                day = _day(result)
                final = not bool(result.get("Estimated", False))
                for group in result.get("Groups", []):
                    keys = [str(k) for k in group.get("Keys", [])]
                    if len(keys) == 2:
                        yield day, final, keys, group.get("Metrics", {})
            token = page.get("NextPageToken")
            if not token:
                return
        raise ProviderError(f"aws: Cost Explorer answered more than {MAX_PAGES} pages")


def _day(result: dict[str, Any]) -> date:
    text = str(result.get("TimePeriod", {}).get("Start", ""))[:10]
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ProviderError(f"aws: Cost Explorer TimePeriod {text!r}: not a date") from None


def _amount(metrics: dict[str, Any], name: str) -> Any:
    raw = metrics.get(name, {}).get("Amount", "0")
    try:
        return checked_usd(raw, f"aws: Cost Explorer {name}")
    except ValueError as exc:
        raise ProviderError(str(exc)) from None


def _reason(exc: Exception) -> str:
    error = getattr(exc, "response", {}).get("Error", {}) if hasattr(exc, "response") else {}
    code = error.get("Code") if isinstance(error, dict) else None
    return str(code or type(exc).__name__)


def bill_sources(
    section: BaseModel | None, bill: BillSettings, environ: Mapping[str, str]
) -> tuple[list[CostSource], list[str]]:
    """The AWS scope's cost source (the :class:`~gpuplan.providers.cloud_entry.CloudEntry`
    hook): Cost Explorer, or the CUR 2.0 export when ``bill.aws_cur_export`` is set;
    nothing without ``scope.aws``. boto3 is imported here."""
    from gpuplan.providers.aws.bill_settings import AwsBill
    from gpuplan.providers.aws.scope import AwsScope

    if not isinstance(section, AwsScope):
        return [], []
    from gpuplan.providers.aws.cur_export import CurExportSource
    from gpuplan.providers.aws.session import make_session

    session = make_session(section.profile, section.role_arn)
    keys = bill.section("aws")
    cur = keys.aws_cur_export if isinstance(keys, AwsBill) else None
    source = CostExplorerSource(session) if cur is None else CurExportSource(session, cur)
    return [source], []
