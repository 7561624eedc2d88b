"""A local Cloud Billing Catalog API (REST) serving Compute Engine SKUs page by page.

``google-cloud-billing``'s REST transport speaks to it through ``api_endpoint=
http://127.0.0.1:PORT``; the responses are ``ListSkusResponse`` messages serialised by
the library itself, so the JSON is what the real API sends. The SKUs are built from
catalog offers: per machine family, region and usage type a per-vCPU and per-GiB price
(solved from the offers' host parts) and per GPU a per-GPU-hour price, plus SKUs the
refresh must ignore.
"""

from __future__ import annotations

import urllib.parse
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal

from google.cloud import billing_v1

from gpuplan.core.catalog.offers import Offer, PricingModel
from gpuplan.providers.gcp.billing_catalog import FAMILIES, N1_GPUS
from tests.providers.pricing.http_pages import serve_pages

USAGE = {
    PricingModel.ON_DEMAND: ("OnDemand", ""),
    PricingModel.SPOT: ("Preemptible", "Spot Preemptible "),
    PricingModel.RESERVED_1Y: ("Commit1Yr", "Commitment v1: "),
    PricingModel.RESERVED_3Y: ("Commit3Yr", "Commitment v1: "),
}
NANO = Decimal("0.000000001")


@dataclass
class BillingFake:
    skus: list[billing_v1.Sku]
    page_size: int = 4
    fail_pages: dict[int, int] = field(default_factory=dict)
    truncate_pages: set[int] = field(default_factory=set)
    endless: bool = False
    """Always answer with a next page token (a looping API)."""
    requests: list[str] = field(default_factory=list)
    endpoint: str = ""

    def page(self, path: str) -> tuple[int, bytes]:
        self.requests.append(path)
        url = urllib.parse.urlsplit(path)
        if url.path != "/v1/services/6F81-5844-456A/skus":
            return 404, b'{"error": {"code": 404, "message": "not found"}}'
        token = urllib.parse.parse_qs(url.query).get("pageToken", ["0"])[0]
        start = int(token or "0")
        number = start // self.page_size + 1
        if number in self.fail_pages:
            status = self.fail_pages[number]
            return status, b'{"error": {"code": %d, "message": "backend error"}}' % status
        chunk = self.skus[start : start + self.page_size]
        following = start + self.page_size
        response = billing_v1.ListSkusResponse(
            skus=chunk,
            next_page_token=str(following) if following < len(self.skus) or self.endless else "",
        )
        body = billing_v1.ListSkusResponse.to_json(response).encode()
        if number in self.truncate_pages:
            body = body[: len(body) // 2]
        return 200, body


@contextmanager
def serve(fake: BillingFake) -> Iterator[BillingFake]:
    with serve_pages(fake.page) as base:
        fake.endpoint = base
        yield fake


def sku(
    description: str,
    usage: str,
    region: str,
    price: Decimal,
    *,
    group: str,
    unit: str = "h",
    currency: str = "USD",
) -> billing_v1.Sku:
    whole = int(price)
    nanos = int(((price - whole) / NANO).to_integral_value())
    sku_id = f"{abs(hash((description, usage, region))) % 0xFFFF_FFFF:08X}"
    return billing_v1.Sku(
        name=f"services/6F81-5844-456A/skus/{sku_id}",
        sku_id=sku_id,
        description=description,
        category=billing_v1.Category(
            service_display_name="Compute Engine",
            resource_family="Compute",
            resource_group=group,
            usage_type=usage,
        ),
        service_regions=[region],
        pricing_info=[
            billing_v1.PricingInfo(
                summary="",
                pricing_expression=billing_v1.PricingExpression(
                    usage_unit=unit,
                    usage_unit_description="hour" if unit == "h" else "gibibyte hour",
                    base_unit="s" if unit == "h" else "By.s",
                    display_quantity=1,
                    tiered_rates=[
                        billing_v1.PricingExpression.TierRate(
                            start_usage_amount=0,
                            unit_price={"currency_code": currency, "units": whole, "nanos": nanos},
                        )
                    ],
                ),
                currency_conversion_rate=1,
            )
        ],
        service_provider_name="Google",
    )


def _names(offer: Offer) -> tuple[str, str] | None:
    for prefix, family, gpu in FAMILIES:
        if offer.instance_type.startswith(prefix):
            return family, gpu or N1_GPUS.get(offer.gpu, "")
    return None


def _solve(points: list[tuple[Decimal, Decimal, Decimal]]) -> tuple[Decimal, Decimal]:
    """Per-vCPU and per-GiB prices that best fit (vcpus, GiB, host price) points."""
    a = sum(v * v for v, _, _ in points)
    b = sum(v * m for v, m, _ in points)
    d = sum(m * m for _, m, _ in points)
    e = sum(v * h for v, _, h in points)
    f = sum(m * h for _, m, h in points)
    det = a * d - b * b
    if abs(det) < Decimal("1e-9"):  # one shape (or one vCPU:RAM ratio): split 80/20
        v, m, h = points[0]
        return h * Decimal("0.8") / v, h * Decimal("0.2") / m
    return (e * d - b * f) / det, (a * f - b * e) / det


def billing_skus(offers: Iterable[Offer]) -> list[billing_v1.Sku]:
    """Core, RAM and GPU SKUs that price these offers, plus SKUs a refresh must skip."""
    hosts: dict[tuple[str, str, PricingModel], list[tuple[Decimal, Decimal, Decimal]]] = (
        defaultdict(list)
    )
    gpus: dict[tuple[str, str, PricingModel], Decimal] = {}
    for offer in offers:
        names = _names(offer)
        for model, parts in (offer.parts or {}).items():
            if names is None:
                continue
            point = (Decimal(offer.vcpus), Decimal(str(offer.memory_gb)), parts.host)
            hosts[(names[0], offer.region, model)].append(point)
            gpus[(names[1], offer.region, model)] = parts.accelerators / Decimal(
                str(offer.gpu_count)
            )
    out: list[billing_v1.Sku] = []
    for (family, region, model), points in sorted(hosts.items()):
        usage, prefix = USAGE[model]
        core, ram = _solve(points)
        out.append(
            sku(
                f"{prefix}{family} Instance Core running in Americas",
                usage,
                region,
                core.quantize(NANO),
                group="CPU",
            )
        )
        out.append(
            sku(
                f"{prefix}{family} Instance Ram running in Americas",
                usage,
                region,
                ram.quantize(NANO),
                group="RAM",
                unit="GiBy.h",
            )
        )
    for (gpu, region, model), price in sorted(gpus.items()):
        usage, prefix = USAGE[model]
        tesla = "Tesla " if gpu.split()[0] in {"A100", "T4", "V100", "P100", "P4"} else ""
        out.append(
            sku(
                f"{prefix}Nvidia {tesla}{gpu} GPU running in Americas",
                usage,
                region,
                price.quantize(NANO),
                group="GPU",
            )
        )
    for region in sorted({r for _, r, _ in gpus}):
        out.append(
            sku(
                "Licensing Fee for Windows Server on A2 VM",
                "OnDemand",
                region,
                Decimal("0.046"),
                group="CPU",
            )
        )
        out.append(
            sku(
                "DWS Calendar Mode Nvidia H100 80GB GPU running in Americas",
                "OnDemand",
                region,
                Decimal("1.5"),
                group="GPU",
            )
        )
    return out
