"""Azure actual spend through Cost Management Query, over azure-core's HTTP pipeline.

``POST {scope}/providers/Microsoft.CostManagement/query`` on a subscription, daily,
``AmortizedCost`` (reservations and savings plans spread over the hours they cover),
summed as ``CostUSD`` whatever the billing currency.
Three queries per range, so that no dollar counts twice (the API takes at most two
groupings per query):

1. pay-as-you-go and spot usage of virtual machines and storage, grouped by the team
   tag and the meter (``NC24ads A100 v4`` is the VM size ``Standard_NC24ads_A100_v4``;
   ``P30 LRS Disk`` a disk), with cost and usage quantity (hours for VMs);
2. usage under a reservation or savings plan, grouped by pricing model and meter:
   hours at the commitment's effective rate;
3. refunds and unused commitments, grouped by charge type and meter category.

The REST API through azure-core (bearer token policy, retries honouring
``Retry-After``) rather than ``azure-mgmt-costmanagement``: the generated client does
not follow the query's ``nextLink`` (which is POSTed again with the same body), and no
new dependency comes with it. Role: Cost Management Reader on the subscription.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from gpuplan.core.audit.bill.lines import CostKind, CostLine, checked_usd
from gpuplan.providers.base import ProviderError

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential
    from azure.core.pipeline.transport import HttpTransport
    from pydantic import BaseModel

    from gpuplan.core.policy.bill_settings import BillSettings
    from gpuplan.providers.billing.base import CostSource

API_VERSION = "2023-03-01"
PUBLIC_ARM = "https://management.azure.com"
PERMISSIONS = ("Cost Management Reader", "Microsoft.CostManagement/query/action")
MAX_PAGES = 100
_CATEGORIES = ["Virtual Machines", "Storage"]
_COMMITMENT_MODELS = ["Reservation", "SavingsPlan"]
_OTHER_CHARGES = ["Refund", "UnusedReservation", "UnusedSavingsPlan", "RoundingAdjustment"]
_SUFFIXES = (" Low Priority", " Spot")


def vm_size(meter: str) -> str:
    """``NC24ads A100 v4 Spot`` -> ``Standard_NC24ads_A100_v4``; "" for a disk meter."""
    if is_disk(meter) or not meter:
        return ""
    for suffix in _SUFFIXES:
        meter = meter.removesuffix(suffix)
    return "Standard_" + meter.strip().replace(" ", "_")


def is_disk(meter: str) -> bool:
    return meter.endswith(("Disk", "Disks", "Disk Mount")) or " LRS " in f" {meter} "


def credential(environ: Mapping[str, str] | None = None) -> TokenCredential:
    """The lifecycle adapter's credential chain (environment, workload and managed
    identity, CLI), sovereign authorities included."""
    from gpuplan.providers.azure.provider import default_credential

    return default_credential(environ)


class CostManagementSource:
    """One subscription's bill through Cost Management Query."""

    provider = "azure"
    permissions: tuple[str, ...] = PERMISSIONS

    def __init__(
        self, subscription: str, token: TokenCredential, *, arm_endpoint: str | None = None,
        transport: HttpTransport[Any, Any] | None = None, retry_total: int = 3,
    ) -> None:  # fmt: skip
        from azure.core import PipelineClient
        from azure.core.pipeline import policies

        self.scope = subscription
        base = (arm_endpoint or PUBLIC_ARM).rstrip("/")
        self._url = (
            f"{base}/subscriptions/{subscription}/providers/Microsoft.CostManagement/query"
            f"?api-version={API_VERSION}"
        )
        auth = policies.BearerTokenCredentialPolicy(token, f"{base}/.default")
        pipeline = [policies.HeadersPolicy(), policies.UserAgentPolicy("gpuplan"),
                    policies.RetryPolicy(retry_total=retry_total), auth]  # fmt: skip
        kwargs: dict[str, Any] = {"policies": pipeline}
        if transport is not None:
            kwargs["transport"] = transport
        self._client: Any = PipelineClient(base, **kwargs)
        self._what = f"azure: Cost Management query on {subscription}"

    def daily_costs(self, since: date, until: date, team_label: str) -> list[CostLine]:
        period = {"from": f"{since.isoformat()}T00:00:00Z", "to": f"{until.isoformat()}T00:00:00Z"}
        lines: list[CostLine] = []
        usage = _body(period, [("TagKey", team_label), ("Dimension", "Meter")],
                      _all(("MeterCategory", _CATEGORIES),
                           ("PricingModel", ["OnDemand", "Spot"])))  # fmt: skip
        for row in self._rows(usage):
            meter = str(row.get("Meter") or "")
            kind = CostKind.DISK if is_disk(meter) else CostKind.INSTANCE
            hours = _money(row.get("UsageQuantity", 0)) if kind is CostKind.INSTANCE else None
            lines.append(self._line(row, kind, vm_size(meter), str(row.get("TagValue") or ""),
                                    meter, hours))  # fmt: skip
        covered = _body(period, [("Dimension", "PricingModel"), ("Dimension", "Meter")],
                        {"dimensions": {"name": "PricingModel", "operator": "In",
                                        "values": _COMMITMENT_MODELS}})  # fmt: skip
        for row in self._rows(covered):
            meter = str(row.get("Meter") or "")
            kind = CostKind.DISK if is_disk(meter) else CostKind.COMMITMENT
            hours = _money(row.get("UsageQuantity", 0)) if kind is CostKind.COMMITMENT else None
            lines.append(self._line(row, kind, vm_size(meter), "",
                                    f"{row.get('PricingModel')}/{meter}", hours))  # fmt: skip
        other = _body(period, [("Dimension", "ChargeType"), ("Dimension", "MeterCategory")],
                      {"dimensions": {"name": "ChargeType", "operator": "In",
                                      "values": _OTHER_CHARGES}}, kind="ActualCost")  # fmt: skip
        for row in self._rows(other):
            charge = str(row.get("ChargeType") or "")
            kind = CostKind.DISCOUNT if charge == "Refund" else (
                CostKind.COMMITMENT if charge.startswith("Unused") else CostKind.OTHER)  # fmt: skip
            lines.append(self._line(row, kind, "", "",
                                    f"{charge}/{row.get('MeterCategory')}", None))  # fmt: skip
        return [line for line in lines if line.usd or line.hours]

    def _line(self, row: dict[str, Any], kind: CostKind, size: str, team: str, item: str,
              hours: Any) -> CostLine:  # fmt: skip
        return CostLine("azure", self.scope, _day(row.get("UsageDate")), kind,
                        _money(row.get("CostUSD", 0)), size, team, item[:120], hours)  # fmt: skip

    def _rows(self, body: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """Rows as column-name dicts, following ``nextLink`` (POSTed with the same body)."""
        from azure.core.exceptions import AzureError
        from azure.core.rest import HttpRequest

        url: str | None = self._url
        for _ in range(MAX_PAGES):
            if url is None:
                return
            try:
                response = self._client.send_request(HttpRequest("POST", url, json=body))
                response.raise_for_status()
                page = json.loads(response.read()[:50_000_000])
            except AzureError as exc:
                code = getattr(exc, "status_code", None) or type(exc).__name__
                raise ProviderError(
                    f"azure: Cost Management query on {self.scope}: {code}"
                ) from None
            except ValueError:
                raise ProviderError(
                    f"azure: Cost Management query on {self.scope}: not JSON"
                ) from None
            props = page.get("properties") or {}
            names = [str(c.get("name")) for c in props.get("columns") or []]
            for values in props.get("rows") or []:
                yield dict(zip(names, values, strict=False))
            url = props.get("nextLink") or None
        raise ProviderError(f"azure: Cost Management answered more than {MAX_PAGES} pages")


def _all(*pairs: tuple[str, list[str]]) -> dict[str, Any]:
    return {"and": [{"dimensions": {"name": n, "operator": "In", "values": v}} for n, v in pairs]}


def _body(period: dict[str, str], groups: list[tuple[str, str]], filt: dict[str, Any],
          kind: str = "AmortizedCost") -> dict[str, Any]:  # fmt: skip
    return {
        "type": kind,
        "timeframe": "Custom",
        "timePeriod": period,
        "dataset": {
            "granularity": "Daily",
            "aggregation": {"Cost": {"name": "CostUSD", "function": "Sum"},
                            "UsageQuantity": {"name": "UsageQuantity", "function": "Sum"}},
            "grouping": [{"type": t, "name": n} for t, n in groups],
            "filter": filt,
        },
    }  # fmt: skip


def _day(value: Any) -> date:
    """``UsageDate`` comes as the number 20261201 (or an ISO string with a time)."""
    text = str(value)
    try:
        if text.isdigit() and len(text) == 8:
            return date(int(text[:4]), int(text[4:6]), int(text[6:]))
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date()
    except ValueError:
        raise ProviderError(
            f"azure: Cost Management UsageDate {text[:20]!r} is not a date"
        ) from None


def _money(value: Any) -> Any:
    try:
        return checked_usd(value, "azure: Cost Management amount")
    except ValueError as exc:
        raise ProviderError(str(exc)) from None


def bill_sources(
    section: BaseModel | None, bill: BillSettings, environ: Mapping[str, str]
) -> tuple[list[CostSource], list[str]]:
    """One Cost Management source per subscription ``scope.azure`` lists (the
    :class:`~gpuplan.providers.cloud_entry.CloudEntry` hook); a problem line when the
    subscriptions are discovered (``all``, management groups) rather than listed."""
    from gpuplan.providers.azure.scope import AzureScope

    if section is None:
        return [], []
    if not isinstance(section, AzureScope) or not isinstance(section.subscriptions, list):
        return [], [
            "azure: bill sync needs scope.azure.subscriptions as a list of ids "
            "(all and management groups are not read for the bill yet)"
        ]
    token = credential(environ)
    sources: list[CostSource] = [
        CostManagementSource(sub, token, arm_endpoint=section.arm_endpoint)
        for sub in section.subscriptions
    ]
    return sources, []
