"""Reads SkyPilot ``vms.csv`` catalogs (v6-v8 columns) into core quotes and shapes.

Layout: ``DIR/<cloud>/vms.csv`` (SkyPilot's own ``catalogs/v8`` folder) or
``DIR/<cloud>.csv``, for ``aws``, ``gcp`` and ``azure``. Columns are found by name
(``InstanceType``, ``AcceleratorName``, ``AcceleratorCount``, ``vCPUs``, ``MemoryGiB``,
``Price``, ``SpotPrice``, ``Region``, optional ``AvailabilityZone``), so the AWS ``Arch``
(v8) and Azure ``Generation`` columns do not matter.

Rows are per zone; per instance type and region the on-demand price is the lowest
zone's (they agree up to rounding) and spot is the lowest zone's, with its zone. A
cloud's own rules come from its facts (:class:`gpuplan.core.clouds.CloudFacts`):
``skypilot_rows`` turns its rows into one per offer (GCP joins host and accelerator rows,
:mod:`gpuplan.providers.gcp.skypilot`) and ``outside_region`` leaves out zones that are
not the region (AWS Local Zones such as ``use1-atl2-az1``: far cheaper).
GPUs this tool's table does not know (K80, M60, P4, ...) are skipped and counted.
Prices are not judged here: the refresh gates do that.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path

from gpuplan.core.catalog.gpus import GpuTable
from gpuplan.core.catalog.offers import Offer, PriceParts, PricingModel, Provider
from gpuplan.core.catalog.provider_values import offer_problem
from gpuplan.core.catalog.refresh import Quote
from gpuplan.core.catalog.skypilot_rows import NAME_FIXES, VmRow
from gpuplan.core.clouds import facts_of
from gpuplan.core.errors import DataError
from gpuplan.loaders.safe_read import IMPORT_LIMIT, read_text

REQUIRED: tuple[str, ...] = ("InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs")
REQUIRED += ("MemoryGiB", "Price", "SpotPrice", "Region")
SOURCE = "SkyPilot catalog import"


@dataclass
class Imported:
    """One provider's imported prices: quotes, the shapes they go on, and notices."""

    provider: Provider
    path: Path
    quotes: list[Quote] = field(default_factory=list)
    shapes: dict[str, Offer] = field(default_factory=dict)
    regions: set[str] = field(default_factory=set)
    notices: list[str] = field(default_factory=list)


def find_vms_csv(directory: Path, provider: Provider) -> Path | None:
    for candidate in (directory / provider.value / "vms.csv", directory / f"{provider.value}.csv"):
        if candidate.is_file():
            return candidate
    return None


def read_vms_csv(path: Path) -> list[VmRow]:
    name = str(path)
    text = read_text(path, limit=IMPORT_LIMIT, what="SkyPilot vms.csv")
    reader = csv.DictReader(text.splitlines())
    missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        raise DataError(name, f"not a SkyPilot vms.csv: lacks {', '.join(missing)}", line=1)
    rows = []
    for line, raw in enumerate(reader, start=2):
        try:
            rows.append(
                VmRow(
                    instance_type=(raw["InstanceType"] or "").strip(),
                    gpu=(raw["AcceleratorName"] or "").strip(),
                    count=float(raw["AcceleratorCount"] or 0),
                    vcpus=float(raw["vCPUs"] or 0),
                    memory=float(raw["MemoryGiB"] or 0),
                    price=_price(raw["Price"]),
                    spot=_price(raw["SpotPrice"]),
                    region=(raw["Region"] or "").strip(),
                    zone=(raw.get("AvailabilityZone") or "").strip(),
                )
            )
        except (ValueError, InvalidOperation) as exc:
            raise DataError(name, f"unparsable cell ({exc})", line=line) from None
    return rows


def _price(cell: str | None) -> Decimal | None:
    text = (cell or "").strip()
    return Decimal(text) if text else None


def import_provider(path: Path, provider: Provider, gpus: GpuTable, *, as_of: date) -> Imported:
    """Quotes and shapes from one vms.csv."""
    rows = read_vms_csv(path)
    out = Imported(provider, path)
    facts = facts_of(provider)
    if facts.skypilot_rows is not None:
        rows, notes = facts.skypilot_rows(rows)
        out.notices.extend(f"{path}: {note}" for note in notes)
    skipped: dict[str, int] = defaultdict(int)
    implausible: dict[str, str] = {}
    grouped: dict[tuple[str, str], list[VmRow]] = defaultdict(list)
    for row in rows:
        if not row.gpu or not row.instance_type:
            continue
        canonical = _canonical(row.gpu, gpus)
        if canonical is None:
            skipped[row.gpu] += 1
            continue
        if row.instance_type in implausible:
            continue
        if row.instance_type not in out.shapes:
            why = _shape_problem(row, canonical, gpus)
            if why is not None:  # the range checks of every catalog file: skipped, said so
                implausible[row.instance_type] = why
                continue
            out.shapes[row.instance_type] = _shape(provider, row, canonical, gpus, as_of)
        grouped[(row.instance_type, row.region)].append(row)
    for (instance_type, region), zone_rows in sorted(grouped.items()):
        if facts.outside_region is not None:
            outside = facts.outside_region
            zone_rows = [r for r in zone_rows if not outside(r.zone, region)]
        out.regions.add(region)
        out.quotes.extend(_region_quotes(instance_type, region, zone_rows, provider))
    if skipped:
        shown = ", ".join(f"{k} ({v} rows)" for k, v in sorted(skipped.items()))
        out.notices.append(f"{path}: GPUs not in the GPU table, skipped: {shown}")
    for instance_type, why in sorted(implausible.items()):
        out.notices.append(f"{path}: {instance_type} skipped: {why}")
    return out


def _shape_problem(row: VmRow, gpu: str, gpus: GpuTable) -> str | None:
    memory = gpus.get(gpu).memory_gb * min(row.count, 1.0) if row.count == row.count else 0
    shape = {
        "gpu_count": row.count,
        "gpu_memory_gb": memory,
        "vcpus": row.vcpus,
        "memory_gb": row.memory,
    }
    found = offer_problem(shape, {})
    return None if found is None else found[1]


def _canonical(name: str, gpus: GpuTable) -> str | None:
    fixed = NAME_FIXES.get(name, name)
    if fixed in gpus:
        return fixed
    spec = gpus.lookup(fixed)
    return spec.name if spec else None


def _shape(provider: Provider, row: VmRow, gpu: str, gpus: GpuTable, as_of: date) -> Offer:
    memory = gpus.get(gpu).memory_gb * min(row.count, 1.0)
    return Offer(
        provider=provider,
        instance_type=row.instance_type,
        region=row.region,
        gpu=gpu,
        gpu_count=row.count,
        gpu_memory_gb=memory,
        vcpus=int(row.vcpus),
        memory_gb=row.memory,
        as_of=as_of,
        source=SOURCE,
    )


def _region_quotes(
    instance_type: str, region: str, rows: list[VmRow], provider: Provider
) -> Iterable[Quote]:
    ref = f"{provider.value} vms.csv"
    prices = [r for r in rows if r.price is not None]
    if prices:
        low = min(prices, key=lambda r: (r.price, r.zone))
        assert low.price is not None
        parts = _parts(low, PricingModel.ON_DEMAND)
        yield Quote(instance_type, region, PricingModel.ON_DEMAND, low.price, ref=ref, parts=parts)
    spots = [r for r in rows if r.spot is not None]
    if spots:
        low = min(spots, key=lambda r: (r.spot, r.zone))
        assert low.spot is not None
        parts = _parts(low, PricingModel.SPOT)
        zone = low.zone or None
        yield Quote(
            instance_type, region, PricingModel.SPOT, low.spot, zone=zone, ref=ref, parts=parts
        )


def _parts(row: VmRow, model: PricingModel) -> PriceParts | None:
    """Host and accelerator parts of a joined row's price, when it has them."""
    total = row.price if model is PricingModel.ON_DEMAND else row.spot
    host = row.host_price if model is PricingModel.ON_DEMAND else row.host_spot
    if total is None or host is None:
        return None
    return PriceParts(host=host, accelerators=total - host)
