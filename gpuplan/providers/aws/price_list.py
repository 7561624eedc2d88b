"""AWS EC2 GPU prices: the Price List Query API and the spot price history.

On-demand and reserved rates come from ``pricing.get_products`` (ServiceCode
AmazonEC2), one paginated query per region and chunk of instance types, filtered to
Linux, shared tenancy, used capacity and no pre-installed software. Each ``PriceList``
entry is a JSON *string*; from it we take the hourly (``Hrs``) dimension of the
on-demand term and of the standard, no-upfront 1- and 3-year reserved terms.

Spot comes from ``ec2.describe_spot_price_history`` in each region, starting now, for
Linux/UNIX: the latest price per availability zone, summarised per region as the lowest
(with its zone ID) and the median, which goes into the report's notes. Local Zones are
left out: they are not the region, and their spot prices are far below it.

Clients are arguments (tests pass Stubber-wrapped ones); by default boto3 builds them,
honouring ``AWS_ENDPOINT_URL`` and the usual credential chain. boto3 is imported only
when no client is given.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from gpuplan.core.catalog.offers import PricingModel
from gpuplan.core.catalog.refresh import FetchResult, Quote, summarise_spot
from gpuplan.core.wording import plural
from gpuplan.providers.aws.facts import AWS, is_local_zone
from gpuplan.providers.pricing import Progress, no_progress, paging
from gpuplan.providers.pricing.paging import PageCapError, capped

PRICE_LIST = paging.read("price list", paging.Cap(200, 300.0))
"""Paginated: a region's query is 1-3 pages of 100."""
SPOT_HISTORY = paging.read("spot price history", paging.Cap(200, 300.0))
"""Paginated: a few pages."""

PRICING_REGION = "us-east-1"
TYPES_PER_QUERY = 40
FIXED_ATTRIBUTES = (
    ("operatingSystem", "Linux"),
    ("tenancy", "Shared"),
    ("capacitystatus", "Used"),
    ("preInstalledSw", "NA"),
)
# Attributes that tell apart look-alike products left after the filters, when present.
EXPECTED_IF_PRESENT = {
    "licenseModel": "No License required",
    "operation": "RunInstances",
    "marketoption": "OnDemand",
}
LEASES = {"1yr": PricingModel.RESERVED_1Y, "3yr": PricingModel.RESERVED_3Y}


class PriceListError(Exception):
    """A Price List entry that cannot be read."""


def product_filters(region: str, instance_types: Iterable[str]) -> list[dict[str, str]]:
    fields = [("regionCode", region), *FIXED_ATTRIBUTES]
    filters = [{"Type": "TERM_MATCH", "Field": f, "Value": v} for f, v in fields]
    filters.append({"Type": "ANY_OF", "Field": "instanceType", "Value": ",".join(instance_types)})
    return filters


def fetch_aws_prices(
    regions: Iterable[str],
    instance_types: Iterable[str],
    *,
    now: datetime,
    pricing_client: Any = None,
    ec2_client_for: Callable[[str], Any] | None = None,
    progress: Progress = no_progress,
) -> FetchResult:
    """Quotes for each region; a region whose API calls fail lands in ``failures``."""
    from botocore.exceptions import BotoCoreError, ClientError

    types = sorted(set(instance_types))
    if pricing_client is None or ec2_client_for is None:
        import boto3

        pricing_client = pricing_client or boto3.client("pricing", region_name=PRICING_REGION)
        ec2_client_for = ec2_client_for or (lambda r: boto3.client("ec2", region_name=r))
    result = FetchResult(AWS)
    for region in sorted(set(regions)):
        try:
            quotes = list(price_list_quotes(pricing_client, region, types, progress))
            spot, notes = spot_quotes(ec2_client_for(region), region, types, now)
        except (BotoCoreError, ClientError, PriceListError, PageCapError) as exc:
            result.failures[region] = str(exc)
            progress(f"aws {region}: failed: {exc}")
            continue
        progress(
            f"aws {region}: {plural(len(quotes), 'list price')}, {plural(len(spot), 'spot price')}"
        )
        result.quotes.extend(quotes + spot)
        result.notes.extend(notes)
        result.regions.add(region)
    return result


def price_list_quotes(
    client: Any, region: str, types: list[str], progress: Progress = no_progress
) -> Iterator[Quote]:
    seen: set[tuple[str, PricingModel]] = set()
    paginator = client.get_paginator("get_products")
    for start in range(0, len(types), TYPES_PER_QUERY):
        chunk = types[start : start + TYPES_PER_QUERY]
        pages = paginator.paginate(
            ServiceCode="AmazonEC2",
            Filters=product_filters(region, chunk),
            FormatVersion="aws_v1",
            PaginationConfig={"PageSize": 100},
        )
        read = capped(pages, PRICE_LIST, f"aws {region}")
        for number, page in enumerate(read, start=1):
            progress(f"aws {region}: price list page {number}")
            for raw in page.get("PriceList", []):
                for quote in item_quotes(raw, region):
                    if (quote.instance_type, quote.pricing) not in seen:
                        seen.add((quote.instance_type, quote.pricing))
                        yield quote


def item_quotes(raw: object, region: str) -> list[Quote]:
    """Hourly quotes in one Price List entry (a JSON string)."""
    try:
        data: Any = json.loads(raw) if isinstance(raw, str) else raw
        attributes = data["product"]["attributes"]
        instance_type = attributes["instanceType"]
        terms = data.get("terms", {})
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise PriceListError(f"unreadable Price List entry ({exc})") from None
    if any(attributes.get(k, v) != v for k, v in EXPECTED_IF_PRESENT.items()):
        return []
    sku = str(data["product"].get("sku", "?"))
    quotes: list[Quote] = []
    for term in terms.get("OnDemand", {}).values():
        quotes.extend(_hourly(term, instance_type, region, PricingModel.ON_DEMAND, sku))
    for term in terms.get("Reserved", {}).values():
        lease = term.get("termAttributes", {})
        if lease.get("OfferingClass") != "standard" or lease.get("PurchaseOption") != "No Upfront":
            continue
        model = LEASES.get(lease.get("LeaseContractLength", ""))
        if model is not None:
            quotes.extend(_hourly(term, instance_type, region, model, sku))
    return quotes


def _hourly(
    term: dict[str, Any], instance_type: str, region: str, model: PricingModel, sku: str
) -> Iterator[Quote]:
    for dimension in term.get("priceDimensions", {}).values():
        if dimension.get("unit") != "Hrs":
            continue
        per_unit: dict[str, str] = dimension.get("pricePerUnit", {})
        currency = "USD" if "USD" in per_unit else next(iter(per_unit), "")
        try:
            price = Decimal(per_unit.get(currency, "")).normalize()
        except InvalidOperation:
            raise PriceListError(f"{instance_type}: price {per_unit!r} is not a number") from None
        yield Quote(instance_type, region, model, price, currency=currency, ref=f"sku {sku}")


def spot_quotes(
    client: Any, region: str, types: list[str], now: datetime
) -> tuple[list[Quote], list[str]]:
    """The lowest latest spot price per type (with its zone), and a median note."""
    latest: dict[str, dict[str, tuple[datetime, Decimal]]] = {}
    paginator = client.get_paginator("describe_spot_price_history")
    pages = paginator.paginate(
        InstanceTypes=types, ProductDescriptions=["Linux/UNIX"], StartTime=now
    )
    for page in capped(pages, SPOT_HISTORY, f"aws {region}"):
        for record in page.get("SpotPriceHistory", []):
            zone = record.get("AvailabilityZoneId") or record["AvailabilityZone"]
            if is_local_zone(zone, region):
                continue
            zones = latest.setdefault(record["InstanceType"], {})
            stamp, price = record["Timestamp"], Decimal(record["SpotPrice"]).normalize()
            if zone not in zones or stamp > zones[zone][0]:
                zones[zone] = (stamp, price)
    quotes: list[Quote] = []
    notes: list[str] = []
    for instance_type in sorted(latest):
        summary = summarise_spot({z: p for z, (_, p) in latest[instance_type].items()})
        if summary is None:
            continue
        quotes.append(
            Quote(
                instance_type,
                region,
                PricingModel.SPOT,
                summary.minimum,
                zone=summary.zone,
                ref="spot price history",
            )
        )
        notes.append(
            f"{instance_type} {region} spot: lowest {summary.minimum} in {summary.zone}, "
            f"median {summary.median} over {plural(len(latest[instance_type]), 'zone')}"
        )
    return quotes, notes
