"""Price List entries and spot history as AWS returns them, built from catalog offers.

The entries follow the real shape: ``product.attributes`` with instanceType, regionCode,
operatingSystem, tenancy, capacitystatus, preInstalledSw, licenseModel, operation;
``terms.OnDemand`` and ``terms.Reserved`` keyed by ``SKU.OFFERTERMCODE`` with
``priceDimensions`` (an ``Hrs`` dimension, and an upfront ``Quantity`` one for
reservations) and ``termAttributes``. ``get_products`` returns each as a JSON string.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from gpuplan.core.catalog.offers import Offer, PricingModel

ON_DEMAND_CODE = "JRTCKXETXF"
RESERVED_CODES = {
    ("1yr", "No Upfront"): "4NA7Y494T4",
    ("3yr", "No Upfront"): "BPH4J8HBKS",
    ("1yr", "All Upfront"): "6QCMYABX3D",
}


def _dimension(sku: str, code: str, unit: str, usd: Decimal | str) -> dict[str, Any]:
    rate = f"{sku}.{code}.6YS6EN2CT7"
    return {
        rate: {
            "unit": unit,
            "endRange": "Inf",
            "description": f"${usd} per On Demand Linux instance hour",
            "appliesTo": [],
            "rateCode": rate,
            "beginRange": "0",
            "pricePerUnit": {"USD": f"{Decimal(usd):.10f}"},
        }
    }


def price_list_entry(offer: Offer, *, sku: str, **attributes: str) -> str:
    """One Price List entry (a JSON string) for an offer's on-demand and reserved prices."""
    attrs = {
        "instanceType": offer.instance_type,
        "regionCode": offer.region,
        "location": "US East (N. Virginia)",
        "instanceFamily": "GPU instance",
        "vcpu": str(offer.vcpus),
        "memory": f"{offer.memory_gb:g} GiB",
        "gpu": f"{offer.gpu_count:g}",
        "operatingSystem": "Linux",
        "tenancy": "Shared",
        "capacitystatus": "Used",
        "preInstalledSw": "NA",
        "licenseModel": "No License required",
        "operation": "RunInstances",
        "marketoption": "OnDemand",
        "servicecode": "AmazonEC2",
    }
    attrs.update(attributes)
    terms: dict[str, Any] = {"OnDemand": {}, "Reserved": {}}
    if offer.on_demand_hourly is not None:
        terms["OnDemand"][f"{sku}.{ON_DEMAND_CODE}"] = {
            "priceDimensions": _dimension(sku, ON_DEMAND_CODE, "Hrs", offer.on_demand_hourly),
            "sku": sku,
            "effectiveDate": "2026-11-01T00:00:00Z",
            "offerTermCode": ON_DEMAND_CODE,
            "termAttributes": {},
        }
    for (lease, option), code in RESERVED_CODES.items():
        model = PricingModel.RESERVED_1Y if lease == "1yr" else PricingModel.RESERVED_3Y
        hourly = offer.price(model)
        if hourly is None:
            continue
        dims = _dimension(sku, code, "Hrs", hourly if option == "No Upfront" else "0")
        if option == "All Upfront":
            dims.update(_dimension(sku, code + "U", "Quantity", hourly * 8760))
        terms["Reserved"][f"{sku}.{code}"] = {
            "priceDimensions": dims,
            "sku": sku,
            "effectiveDate": "2026-11-01T00:00:00Z",
            "offerTermCode": code,
            "termAttributes": {
                "LeaseContractLength": lease,
                "OfferingClass": "standard",
                "PurchaseOption": option,
            },
        }
    entry = {
        "product": {"productFamily": "Compute Instance", "attributes": attrs, "sku": sku},
        "serviceCode": "AmazonEC2",
        "terms": terms,
        "version": "20261101000000",
        "publicationDate": "2026-11-01T00:00:00Z",
    }
    return json.dumps(entry)


def price_list(offers: Iterable[Offer]) -> list[str]:
    """Entries for the offers, plus a BYOL look-alike at a different price to ignore."""
    out = []
    for n, offer in enumerate(offers):
        out.append(price_list_entry(offer, sku=f"SKU{n:04d}AAAAAAAA"))
        if offer.on_demand_hourly is not None:
            byol = replace(offer, **{"on_demand_hourly": offer.on_demand_hourly / 2})
            out.append(
                price_list_entry(byol, sku=f"SKU{n:04d}BYOLBYOL", licenseModel="Bring your own")
            )
    return out


def spot_history(offers: Iterable[Offer], now: datetime) -> list[dict[str, Any]]:
    """Records as describe_spot_price_history returns them: the offer's zone at the spot
    price now, an older lower price there, and two other zones priced higher."""
    records: list[dict[str, Any]] = []
    for offer in offers:
        if offer.spot_hourly is None or offer.spot_zone is None:
            continue
        prefix = offer.spot_zone.rsplit("-az", 1)[0]
        for zone, price, age in (
            (offer.spot_zone, offer.spot_hourly, 0),
            (offer.spot_zone, offer.spot_hourly / 3, 5),
            (f"{prefix}-az8", offer.spot_hourly * Decimal("1.2"), 1),
            (f"{prefix}-az9", offer.spot_hourly * Decimal("1.5"), 2),
        ):
            records.append(
                {
                    "AvailabilityZone": f"{offer.region}{zone[-1]}",
                    "AvailabilityZoneId": zone,
                    "InstanceType": offer.instance_type,
                    "ProductDescription": "Linux/UNIX",
                    "SpotPrice": f"{price:.6f}",
                    "Timestamp": now - timedelta(hours=age),
                }
            )
    return records
