"""A local stand-in for the Azure Retail Prices API: real HTTP on 127.0.0.1, paged.

It understands the subset of ``$filter`` the refresh sends (``armRegionName eq`` and
``armSkuName eq ... or ...``), serves ``page_size`` items per page with an absolute
``NextPageLink`` (as the real API does), and can be told to break: an HTTP status on a
given page, or a page cut off in the middle of its JSON.

Like the real API, the endpoint has no port (``https://prices.azure.com/api/retail/
prices``) and every ``NextPageLink`` spells the default port out
(``https://prices.azure.com:443/api/retail/prices?...&$skip=100``). A loopback server
cannot listen on a default port, so :func:`serve` names the endpoint
``http://prices.azure.test/api/retail/prices`` (links: ``http://prices.azure.test:80/
...``) and reaches the fake as an HTTP proxy: ``HTTP_PROXY`` points at it while it
serves (the price API's client honours the environment's proxy, as a corporate proxy
needs), so the request line carries the absolute URL and no name is resolved.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from gpuplan.core.catalog.offers import Offer, PricingModel
from tests.providers.pricing.http_pages import serve_pages


@dataclass
class AzureRetailFake:
    items: list[dict[str, Any]]
    page_size: int = 3
    fail_pages: dict[int, int] = field(default_factory=dict)
    """Page number (1-based, per query) -> HTTP status to answer instead."""
    truncate_pages: set[int] = field(default_factory=set)
    endless: bool = False
    """Always answer with a NextPageLink (a looping API or mirror)."""
    requests: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    """Every NextPageLink written (the client may send them normalised)."""
    endpoint: str = ""

    def select(self, query: str) -> list[dict[str, Any]]:
        region = re.search(r"armRegionName eq '([^']+)'", query)
        skus = set(re.findall(r"armSkuName eq '([^']+)'", query))
        return [
            i
            for i in self.items
            if (region is None or i["armRegionName"] == region.group(1))
            and (not skus or i["armSkuName"] in skus)
        ]

    def page(self, path: str) -> tuple[int, bytes]:
        self.requests.append(path)
        params = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
        query = params.get("$filter", [""])[0]
        skip = int(params.get("$skip", ["0"])[0])
        number = skip // self.page_size + 1
        if number in self.fail_pages:
            return self.fail_pages[number], b'{"error": "busy"}'
        selected = self.select(query)
        chunk = selected[skip : skip + self.page_size]
        following = skip + self.page_size
        link = None
        if following < len(selected) or self.endless:
            link = (
                _explicit_port(self.endpoint)
                + "?"
                + urllib.parse.urlencode({"$filter": query, "$skip": str(following)})
            )
        if link is not None:
            self.links.append(link)
        body = json.dumps(
            {"BillingCurrency": "USD", "Items": chunk, "NextPageLink": link, "Count": len(chunk)},
            default=str,
        ).encode()
        if number in self.truncate_pages:
            body = body[: len(body) // 2]
        return 200, body


ENDPOINT = "http://prices.azure.test/api/retail/prices"
PROXY_VARIABLES = ("HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy")


def _explicit_port(endpoint: str) -> str:
    """``endpoint`` with its port written out, default or not (as Azure writes links)."""
    parts = urllib.parse.urlsplit(endpoint)
    if parts.port is not None:
        return endpoint
    port = {"http": 80, "https": 443}[parts.scheme]
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{parts.netloc}:{port}"))


@contextmanager
def serve(fake: AzureRetailFake) -> Iterator[AzureRetailFake]:
    """Serve ``fake`` at :data:`ENDPOINT` through ``HTTP_PROXY`` (set while serving)."""
    saved = {name: os.environ.get(name) for name in PROXY_VARIABLES}
    with serve_pages(fake.page) as base:
        fake.endpoint = ENDPOINT
        for name in PROXY_VARIABLES:
            os.environ.pop(name, None)
        os.environ["HTTP_PROXY"] = os.environ["http_proxy"] = base
        try:
            yield fake
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def _item(offer: Offer, price: Decimal, **extra: Any) -> dict[str, Any]:
    size = offer.instance_type.removeprefix("Standard_").replace("_", " ")
    item: dict[str, Any] = {
        "currencyCode": "USD",
        "tierMinimumUnits": 0.0,
        "retailPrice": float(price),
        "unitPrice": float(price),
        "armRegionName": offer.region,
        "location": offer.region,
        "effectiveStartDate": "2026-11-01T00:00:00Z",
        "meterId": f"m-{abs(hash((offer.key, str(price), str(extra)))) % 10**8:08d}",
        "meterName": size,
        "productId": "DZH318Z0BQ4L",
        "skuId": "DZH318Z0BQ4L/00G1",
        "productName": f"Virtual Machines {size.split()[0][:2]} Series",
        "skuName": size,
        "serviceName": "Virtual Machines",
        "serviceId": "DZH313Z7MMC8",
        "serviceFamily": "Compute",
        "unitOfMeasure": "1 Hour",
        "type": "Consumption",
        "isPrimaryMeterRegion": True,
        "armSkuName": offer.instance_type,
    }
    item.update(extra)
    return item


def azure_items(offers: Iterable[Offer]) -> list[dict[str, Any]]:
    """Retail price items as the API lists them for these offers, plus meters to ignore."""
    items: list[dict[str, Any]] = []
    for o in offers:
        if o.on_demand_hourly is not None:
            od = o.on_demand_hourly
            items.append(_item(o, od))
            items.append(_item(o, od * Decimal("1.4"), productName="Virtual Machines Windows"))
            items.append(_item(o, od * 2, isPrimaryMeterRegion=False))
            items.append(_item(o, od / 5, meterName="Low Priority", skuName="Low Priority"))
            items.append(_item(o, od / 2, type="DevTestConsumption"))
        if o.spot_hourly is not None:
            name = o.instance_type.removeprefix("Standard_").replace("_", " ") + " Spot"
            items.append(_item(o, o.spot_hourly, meterName=name, skuName=name))
        for model, term in (
            (PricingModel.RESERVED_1Y, "1 Year"),
            (PricingModel.RESERVED_3Y, "3 Years"),
        ):
            hourly = o.price(model)
            if hourly is not None and model.term_hours:
                total = hourly * model.term_hours
                items.append(_item(o, total, type="Reservation", reservationTerm=term))
    return items
