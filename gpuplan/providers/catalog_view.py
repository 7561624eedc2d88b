"""The catalog as the cloud adapters read it: offers indexed by instance type.

An adapter maps every listed instance to its catalog row (GPU, count, price); a scan of
all offers per instance made 1,000 instances cost seconds. The view is built once per
adapter. Instance types are matched case-insensitively (Azure sizes come back in any
case).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuplan.core.catalog.gpus import GpuSpec
from gpuplan.core.catalog.offers import Offer, Provider
from gpuplan.core.catalog.query import Catalog


@dataclass(frozen=True)
class CatalogView:
    """One provider's offers by lower-case instance type, and GPU name lookup."""

    catalog: Catalog | None
    by_type: dict[str, Sequence[Offer]] = field(default_factory=dict)

    @classmethod
    def of(cls, catalog: Catalog | None, provider: Provider) -> CatalogView:
        index: dict[str, list[Offer]] = {}
        for offer in catalog.offers if catalog is not None else ():
            if offer.provider is provider:
                index.setdefault(offer.instance_type.lower(), []).append(offer)
        return cls(catalog, dict(index))

    def offer(self, instance_type: str, region: str = "") -> Offer | None:
        """The row for this type, preferring ``region``; None when the type is unknown."""
        rows = self.by_type.get(instance_type.lower(), ())
        for row in rows:
            if row.region == region:
                return row
        return rows[0] if rows else None

    def gpu(self, name: str) -> GpuSpec | None:
        """The GPU a provider's spelling resolves to (``nvidia-tesla-t4`` -> T4)."""
        return self.catalog.gpus.lookup(name) if self.catalog is not None else None
