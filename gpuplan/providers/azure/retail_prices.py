"""Azure VM prices from the public Retail Prices REST API (no SDK, no credentials).

One query per region, filtered to the VM sizes the catalog knows, followed page by page
through ``NextPageLink``. Per size and region it keeps: the Linux consumption meter
(on-demand), the Linux Spot meter, and the 1- and 3-year reservations, whose price is for
the whole term and is turned into an hourly rate (price / hours in the term). Windows,
Low Priority and Dev/Test meters are left out. A region whose pages cannot all be read
(HTTP error, bad JSON, a page without ``Items``) is reported and nothing of it is used.

The endpoint is configurable (``GPUPLAN_AZURE_PRICES_ENDPOINT`` or an argument): a proxy
or a mirror is a real need, and tests serve pages from 127.0.0.1. Pages are read through
:mod:`gpuplan.providers.http` (httpx: http(s) only, timeouts, bounded retries, no
redirects, 32 MiB per page), and a ``NextPageLink`` is followed only on the endpoint's
own scheme, host and port (a ``file://`` or foreign link fails the region).
"""

from __future__ import annotations

import itertools
import urllib.parse
from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import Any

from gpuplan.core.catalog.offers import PricingModel
from gpuplan.core.catalog.refresh import FetchResult, Quote
from gpuplan.core.wording import plural
from gpuplan.providers.azure.facts import AZURE
from gpuplan.providers.http import HttpError, Limits, decode_json, origin, request
from gpuplan.providers.pricing import Progress, no_progress, paging
from gpuplan.providers.pricing.paging import PageCapError, capped
from gpuplan.providers.url_parts import redact_url

RETAIL = paging.read("retail prices", paging.Cap(500, 600.0))
"""Paginated: 1-20 pages of 100."""

DEFAULT_ENDPOINT = "https://prices.azure.com/api/retail/prices"
ENDPOINT_ENV = "GPUPLAN_AZURE_PRICES_ENDPOINT"
MAX_PAGE_BYTES = 32 * 1024 * 1024
RESERVATION_TERMS = {"1 Year": PricingModel.RESERVED_1Y, "3 Years": PricingModel.RESERVED_3Y}
HOURLY = Decimal("0.000001")


class PageError(Exception):
    """A page of the Retail Prices API could not be read."""


class Unreachable(PageError):
    """The Retail Prices API gave no answer at all (name lookup, connection, retries)."""


def region_filter(region: str, sku_names: Iterable[str]) -> str:
    skus = " or ".join(f"armSkuName eq '{name}'" for name in sorted(set(sku_names)))
    return f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}' and ({skus})"


def fetch_azure_prices(
    regions: Iterable[str],
    sku_names: Iterable[str],
    *,
    endpoint: str = DEFAULT_ENDPOINT,
    timeout: float = 30.0,
    progress: Progress = no_progress,
) -> FetchResult:
    """Quotes for ``sku_names`` in each region; failed regions land in ``failures``."""
    result = FetchResult(AZURE)
    names = sorted(set(sku_names))
    gave_up: str | None = None
    for region in sorted(set(regions)):
        if gave_up is not None:
            result.failures[region] = gave_up
            continue
        url = endpoint + "?" + urllib.parse.urlencode({"$filter": region_filter(region, names)})
        try:
            items = list(_items(url, timeout, progress, region))
        except (PageError, PageCapError) as exc:
            result.failures[region] = str(exc)
            progress(f"azure {region}: failed (the report says why)")
            if isinstance(exc, Unreachable) and not result.regions:
                # One endpoint serves every region: no answer for the first, none to wait for.
                gave_up = f"not tried: the price API did not answer for {region}"
            continue
        result.quotes.extend(quotes_from_items(items, region))
        result.regions.add(region)
    return result


def _items(url: str, timeout: float, progress: Progress, region: str) -> Iterator[dict[str, Any]]:
    next_url: str | None = url
    for page in capped(itertools.count(1), RETAIL, f"azure {region}"):
        body = _get_json(next_url or url, timeout, page)
        items = body.get("Items")
        if not isinstance(items, list):
            raise PageError(f"page {page}: no 'Items' list in the response")
        progress(f"azure {region}: page {page}, {plural(len(items), 'price')}")
        yield from (i for i in items if isinstance(i, dict))
        next_url = _next_page(body.get("NextPageLink"), url, page)
        if next_url is None:
            return


def _get_json(url: str, timeout: float, page: int) -> dict[str, Any]:
    """One page through the shared client: http(s) only, no redirects, capped, retried."""
    limits = Limits(
        connect_s=min(timeout, 10.0),
        read_s=timeout,
        attempts=3,
        max_bytes=MAX_PAGE_BYTES,
        trust_env=True,
    )
    try:
        response = request("GET", url, limits=limits, headers={"Accept": "application/json"})
    except HttpError as exc:
        raise Unreachable(f"page {page}: cannot reach the price API ({exc.message})") from None
    if not 200 <= response.status < 300:
        raise PageError(f"page {page}: HTTP {response.status} from {redact_url(url)}")
    try:
        body = decode_json(response, url, ok_only=False, parse_float=Decimal)
    except HttpError as exc:
        raise PageError(f"page {page}: response is not valid JSON ({exc.message})") from None
    if not isinstance(body, dict):
        raise PageError(f"page {page}: expected a JSON object")
    return body


def _next_page(link: object, endpoint: str, page: int) -> str | None:
    """The next page's URL when it is on the endpoint's own origin; else PageError."""
    if not isinstance(link, str) or not link:
        return None
    here = origin(link)
    if here is None or here != origin(endpoint):
        raise PageError(
            f"page {page}: NextPageLink {redact_url(link)} leaves {redact_url(endpoint)}; "
            "not followed"
        )
    return link


def classify(item: dict[str, Any]) -> PricingModel | None:
    """The pricing model of a retail price item, or None for meters we do not use."""
    product = str(item.get("productName", ""))
    meter = f"{item.get('meterName', '')} {item.get('skuName', '')}"
    if "Windows" in product or "Low Priority" in meter:
        return None
    if str(item.get("unitOfMeasure", "")) != "1 Hour":
        return None
    kind = item.get("type")
    if kind == "Consumption":
        return PricingModel.SPOT if "Spot" in meter else PricingModel.ON_DEMAND
    if kind == "Reservation":
        return RESERVATION_TERMS.get(str(item.get("reservationTerm", "")))
    return None


def quotes_from_items(items: Iterable[dict[str, Any]], region: str) -> list[Quote]:
    """One quote per (size, pricing model, currency): the primary meter, else the lowest."""
    best: dict[tuple[str, PricingModel, str], tuple[bool, Decimal, Quote]] = {}
    for item in items:
        model = classify(item)
        sku = item.get("armSkuName")
        if model is None or not isinstance(sku, str) or item.get("armRegionName") != region:
            continue
        price = _decimal(item.get("retailPrice"))
        hours = model.term_hours
        hourly = (price / hours).quantize(HOURLY) if hours and price > 0 else price
        quote = Quote(
            instance_type=sku,
            region=region,
            pricing=model,
            hourly=hourly,
            currency=str(item.get("currencyCode", "")),
            ref=f"meter {item.get('meterId', '?')} {item.get('meterName', '')}".strip(),
        )
        rank = (not bool(item.get("isPrimaryMeterRegion", True)), hourly, quote)
        # A non-USD item is kept apart so that the gates see it and reject the region.
        key = (sku, model, quote.currency)
        current = best.get(key)
        if current is None or rank[:2] < current[:2]:
            best[key] = rank
    return [entry[2] for _, entry in sorted(best.items(), key=lambda kv: kv[0])]


def _decimal(value: object) -> Decimal:
    try:
        return Decimal(str(value))
    except ArithmeticError:
        return Decimal(0)
