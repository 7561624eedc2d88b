"""The catalog CSV's columns, in one place: the validated reader (``catalog_files``), the
fast reader (``fast_catalog``) and the writer (``catalog_writer``) all use these.

A file has the shape columns, then one to three price columns per pricing model (the
instance's total per hour, or its host and GPU parts), then the tail. Light on purpose:
the fast reader imports it on ``gpuplan estimate``'s path.
"""

from __future__ import annotations

from decimal import Decimal

from gpuplan.core.catalog.kinds import PricingModel

SHAPE = ("instance_type", "region", "gpu", "gpu_count", "gpu_memory_gb", "vcpus", "memory_gb")
"""What the instance is (all required)."""
LINK = ("interconnect", "network_gbps")
"""How its GPUs talk (optional)."""
TAIL = ("spot_zone", "as_of", "source")
"""Where the spot price was seen (optional), and when and where the prices were read."""

REQUIRED = (*SHAPE, "as_of", "source")
OPTIONAL = (*LINK, "spot_zone")
WRITTEN_SHAPE = (*SHAPE, *LINK)
"""The columns the writer puts before the prices."""

MAX_PLAUSIBLE_HOURLY = Decimal(1000)
"""No GPU instance lists above this per hour; larger figures are placeholders or typos."""
PLACEHOLDER_PRICES = frozenset({Decimal(700), Decimal("999"), Decimal("9999"), Decimal("99999")})
"""Values seen used as placeholders in public catalogs (e.g. 700.0 for unpriced SKUs)."""


def price_columns(pricing: PricingModel) -> tuple[str, str, str]:
    """(total, host part, GPU part) column names for a pricing model."""
    p = pricing.value
    return f"{p}_hourly", f"host_{p}_hourly", f"gpu_{p}_hourly"


def date_column(pricing: PricingModel) -> str:
    """The optional column with the day a price under ``pricing`` was read, where that
    differs from the row's ``as_of`` (a Capacity Block rate of 2024 beside a 2026 spot)."""
    return f"{pricing.value}_as_of"


def known_columns() -> set[str]:
    """Every column a catalog file may have."""
    known = {*REQUIRED, *OPTIONAL}
    for pricing in PricingModel:
        known.update(price_columns(pricing))
        known.add(date_column(pricing))
    return known
