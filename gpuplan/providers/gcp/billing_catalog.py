"""GCP GPU configuration prices from the Cloud Billing Catalog API (google-cloud-billing).

Compute Engine SKUs (``services/6F81-5844-456A``) price the parts apart: per-vCPU-hour
and per-GiB-hour for the host machine family, and per-GPU-hour for each accelerator.
We read every SKU page by page, keep the GPU and host core/RAM SKUs by their
description and ``category.usage_type`` (OnDemand, Preemptible = spot, Commit1Yr,
Commit3Yr), then price each configuration the catalog knows (its machine type, vCPUs,
memory and GPUs) as host + GPUs, keeping both parts. A configuration whose family or GPU
has no SKU in a region gets no price there.

The machine shapes come from the catalog, not from the Compute API, so a refresh needs
no project. The endpoint is configurable (``GPUPLAN_GCP_BILLING_ENDPOINT``): an
``http://`` endpoint is spoken to over REST without credentials (a local mirror, the
tests' wire fake); otherwise the client uses Application Default Credentials.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpuplan.core.catalog.offers import Offer, PriceParts, PricingModel
from gpuplan.core.catalog.refresh import FetchResult, Quote, price_problem, unit_price_problem
from gpuplan.core.wording import plural
from gpuplan.providers.gcp.facts import GCP
from gpuplan.providers.gcp.families import FAMILIES as GCP_FAMILIES
from gpuplan.providers.pricing import Progress, no_progress, paging
from gpuplan.providers.pricing.paging import capped

SKUS = paging.read("billing SKUs", paging.Cap(200, 600.0))
"""Paginated: the Compute Engine SKU list is ~10 pages of 5,000."""

COMPUTE_ENGINE = "services/6F81-5844-456A"
# Configuration parts are rounded to a micro-dollar per hour: SKU unit prices carry
# nanos, and a 200-vCPU host would otherwise show noise as price changes.
MICRO = Decimal("0.000001")
ENDPOINT_ENV = "GPUPLAN_GCP_BILLING_ENDPOINT"
USAGE_TYPES = {
    "OnDemand": PricingModel.ON_DEMAND,
    "Preemptible": PricingModel.SPOT,
    "Commit1Yr": PricingModel.RESERVED_1Y,
    "Commit3Yr": PricingModel.RESERVED_3Y,
}
# Machine type prefix -> (host SKU family as SKU descriptions name it, GPU SKU name):
# the fixed-GPU families of the one GCP family table, then n1 hosts (GPUs attached).
FAMILIES: tuple[tuple[str, str, str], ...] = (
    *((f.prefix, f.host_sku, f.gpu_sku) for f in GCP_FAMILIES if f.host_sku is not None),
    ("n1-standard-", "N1 Predefined", ""),
)
# GPUs attached to n1 hosts: canonical name -> GPU SKU name.
N1_GPUS = {"T4": "T4", "V100-16GB": "V100", "P100": "P100"}
_HOST = re.compile(
    r"^(?:Spot Preemptible |Preemptible |Commitment v1: )?"
    r"(?P<family>A2|A3 Mega|A3 Ultra|A3|A4|G2|N1 Predefined) (?:Instance )?(?P<part>Core|Cpu|Ram)\b"
)
_GPU = re.compile(
    r"^(?:Spot Preemptible |Preemptible |Commitment v1: )?Nvidia (?:Tesla )?"
    r"(?P<gpu>A100 80GB|A100|H100 80GB Mega|H100 80GB|H200 141GB|B200|L4|T4|V100|P100|P4) GPU\b"
)


@dataclass(frozen=True)
class UnitPrice:
    price: Decimal
    currency: str
    sku: str


# (kind, name, region, pricing) -> price; kind is "core", "ram" or "gpu".
PriceBook = dict[tuple[str, str, str, PricingModel], UnitPrice]


def make_client(endpoint: str | None = None) -> Any:
    """A CloudCatalogClient; ``http://`` endpoints get REST and anonymous credentials."""
    from google.api_core.client_options import ClientOptions
    from google.cloud import billing_v1

    if endpoint and endpoint.startswith("http://"):
        from google.auth.credentials import AnonymousCredentials

        return billing_v1.CloudCatalogClient(
            credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]  # google-auth is untyped here
            transport="rest",
            client_options=ClientOptions(api_endpoint=endpoint),
        )
    options = ClientOptions(api_endpoint=endpoint) if endpoint else None
    return billing_v1.CloudCatalogClient(client_options=options)


def fetch_gcp_prices(
    regions: Iterable[str],
    shapes: Mapping[str, Offer],
    *,
    known: Mapping[tuple[str, str], Iterable[PricingModel]] | None = None,
    client: Any = None,
    endpoint: str | None = None,
    progress: Progress = no_progress,
) -> FetchResult:
    """Configuration quotes for the catalog's GCP shapes in each region.

    SKUs are priced per machine family and region, so they cannot say whether a machine
    type exists in a region, or is sold there on demand or with a commitment: with
    ``known`` ((instance type, region) -> pricing models, from the catalog) only those
    are priced. The SKU list is global, so a failure part-way fails the whole provider: it
    raises, and the caller keeps the previous data.
    """
    if client is None:
        client = make_client(endpoint)
    book = read_price_book(client, progress)
    sold = None if known is None else {k: frozenset(v) for k, v in known.items()}
    result = FetchResult(GCP)
    for region in sorted(set(regions)):
        for quote in configuration_quotes(book, region, shapes.values()):
            if sold is None or quote.pricing in sold.get((quote.instance_type, region), ()):
                result.quotes.append(quote)
        result.regions.add(region)
    return result


def read_price_book(client: Any, progress: Progress = no_progress) -> PriceBook:
    book: PriceBook = {}
    pager = client.list_skus(request={"parent": COMPUTE_ENGINE, "page_size": 5000})
    for number, page in enumerate(capped(pager.pages, SKUS, "gcp"), start=1):
        progress(f"gcp: SKU page {number}, {plural(len(page.skus), 'SKU')}")
        for sku in page.skus:
            for key, unit in sku_prices(sku):
                book.setdefault(key, unit)
    return book


def sku_prices(sku: Any) -> Iterator[tuple[tuple[str, str, str, PricingModel], UnitPrice]]:
    """Price book entries of one SKU: nothing for SKUs we do not use."""
    model = USAGE_TYPES.get(sku.category.usage_type)
    if model is None or not sku.pricing_info:
        return
    description = sku.description
    host, gpu = _HOST.match(description), _GPU.match(description)
    if host:
        kind = "ram" if host["part"] == "Ram" else "core"
        name = host["family"]
    elif gpu and sku.category.resource_group == "GPU":
        kind, name = "gpu", gpu["gpu"]
    else:
        return
    expression = sku.pricing_info[0].pricing_expression
    if not expression.tiered_rates:
        return
    rate = expression.tiered_rates[-1].unit_price
    price = Decimal(rate.units) + Decimal(rate.nanos) / Decimal(10**9)
    unit = UnitPrice(price, rate.currency_code, sku.sku_id)
    for region in sku.service_regions:
        yield (kind, name, region, model), unit


def family_of(shape: Offer) -> tuple[str, str] | None:
    """(host SKU family, GPU SKU name) for a configuration, None when not priceable."""
    for prefix, family, gpu in FAMILIES:
        if shape.instance_type.startswith(prefix):
            return (family, gpu or N1_GPUS.get(shape.gpu, "")) if gpu or shape.gpu else None
    return None


def configuration_quotes(book: PriceBook, region: str, shapes: Iterable[Offer]) -> list[Quote]:
    quotes: list[Quote] = []
    for shape in shapes:
        names = family_of(shape)
        if names is None or not names[1]:
            continue
        family, gpu = names
        for model in PricingModel:
            core = book.get(("core", family, region, model))
            ram = book.get(("ram", family, region, model))
            accel = book.get(("gpu", gpu, region, model))
            if core is None or ram is None or accel is None:
                continue
            # Host units are per vCPU- and GB-hour; the accelerator's is per GPU-hour.
            bad = next(
                (
                    u
                    for u, why in (
                        (core, unit_price_problem(core.price, core.currency)),
                        (ram, unit_price_problem(ram.price, ram.currency)),
                        (accel, price_problem(accel.price, accel.currency, 1)),
                    )
                    if why
                ),
                None,
            )
            if bad is not None:
                # Hand the bad unit price to the gates, which name it and reject (an
                # accelerator's as the instance's GPUs cost: the gates judge per GPU).
                per_gpu = bad is accel and not unit_price_problem(bad.price, bad.currency)
                quotes.append(
                    Quote(
                        shape.instance_type,
                        region,
                        model,
                        bad.price * Decimal(str(shape.gpu_count)) if per_gpu else bad.price,
                        currency=bad.currency,
                        ref=f"SKU {bad.sku}",
                    )
                )
                continue
            host = core.price * shape.vcpus + ram.price * Decimal(str(shape.memory_gb))
            gpus = accel.price * Decimal(str(shape.gpu_count))
            host, gpus = host.quantize(MICRO), gpus.quantize(MICRO)
            quotes.append(
                Quote(
                    shape.instance_type,
                    region,
                    model,
                    host + gpus,
                    parts=PriceParts(host=host, accelerators=gpus),
                    ref=f"SKUs {core.sku}, {ram.sku}, {accel.sku}",
                )
            )
    return quotes
