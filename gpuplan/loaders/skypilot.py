"""Reads SkyPilot ``vms.csv`` catalogs (v6-v8 columns) into core quotes and shapes.

Layout: ``DIR/<cloud>/vms.csv`` (SkyPilot's own ``catalogs/v8`` folder) or
``DIR/<cloud>.csv``, for ``aws``, ``gcp`` and ``azure``. Columns are found by name
(``InstanceType``, ``AcceleratorName``, ``AcceleratorCount``, ``vCPUs``, ``MemoryGiB``,
``Price``, ``SpotPrice``, ``Region``, optional ``AvailabilityZone``), so the AWS ``Arch``
(v8) and Azure ``Generation`` columns do not matter.

Rows are per zone; per instance type and region the on-demand price is the lowest
zone's (they agree up to rounding) and spot is the lowest zone's, with its zone (AWS
Local Zones such as ``use1-atl2-az1`` left out: not the region, and far cheaper). GCP
lists the host VM and the accelerators as separate rows: an a2/a3/a4/g2 machine type
carries fixed GPUs and its price is host + accelerator row of the same zone; n1 hosts
take attachable GPUs (T4, V100, P100 within GCP's vCPU limits per GPU count) and become
``n1-standard-<N>+<count>x<GPU>`` offers, named as the bundled catalog names them.
GPUs this tool's table does not know (K80, M60, P4, ...) are skipped and counted.
Prices are not judged here: the refresh gates do that.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path

from gpuplan.core.catalog.gcp_families import family_of, fixed_gpu_count
from gpuplan.core.catalog.gpus import GpuTable
from gpuplan.core.catalog.offers import Offer, PriceParts, PricingModel, Provider
from gpuplan.core.catalog.provider_values import offer_problem
from gpuplan.core.catalog.refresh import Quote, is_aws_local_zone
from gpuplan.core.errors import DataError
from gpuplan.loaders.safe_read import IMPORT_LIMIT, read_text

REQUIRED: tuple[str, ...] = ("InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs")
REQUIRED += ("MemoryGiB", "Price", "SpotPrice", "Region")
# SkyPilot's bare names for the smaller memory variants.
NAME_FIXES = {"A100": "A100-40GB", "V100": "V100-16GB", "H100-MEGA": "H100"}
# GPUs an n1-standard host can take: GPU -> count -> most vCPUs (GCP's documented limits,
# as the bundled catalog applies them; see pricing/README.md).
N1_LIMITS = {
    "T4": {1: 48, 2: 48, 4: 96},
    "V100": {1: 12, 2: 24, 4: 48, 8: 96},
    "P100": {1: 16, 2: 32, 4: 96},
}
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


@dataclass(frozen=True)
class _Row:
    instance_type: str
    gpu: str
    count: float
    vcpus: float
    memory: float
    price: Decimal | None
    spot: Decimal | None
    region: str
    zone: str
    host_price: Decimal | None = None
    host_spot: Decimal | None = None


def find_vms_csv(directory: Path, provider: Provider) -> Path | None:
    for candidate in (directory / provider.value / "vms.csv", directory / f"{provider.value}.csv"):
        if candidate.is_file():
            return candidate
    return None


def read_vms_csv(path: Path) -> list[_Row]:
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
                _Row(
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
    if provider is Provider.GCP:
        rows = _combine_gcp(rows, out)
    skipped: dict[str, int] = defaultdict(int)
    implausible: dict[str, str] = {}
    grouped: dict[tuple[str, str], list[_Row]] = defaultdict(list)
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
        if provider is Provider.AWS:
            zone_rows = [r for r in zone_rows if not is_aws_local_zone(r.zone, region)]
        out.regions.add(region)
        out.quotes.extend(_region_quotes(instance_type, region, zone_rows, provider))
    if skipped:
        shown = ", ".join(f"{k} ({v} rows)" for k, v in sorted(skipped.items()))
        out.notices.append(f"{path}: GPUs not in the GPU table, skipped: {shown}")
    for instance_type, why in sorted(implausible.items()):
        out.notices.append(f"{path}: {instance_type} skipped: {why}")
    return out


def _shape_problem(row: _Row, gpu: str, gpus: GpuTable) -> str | None:
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


def _shape(provider: Provider, row: _Row, gpu: str, gpus: GpuTable, as_of: date) -> Offer:
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
    instance_type: str, region: str, rows: list[_Row], provider: Provider
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


def _parts(row: _Row, model: PricingModel) -> PriceParts | None:
    """Host and accelerator parts of a combined GCP row's price, when it has them."""
    total = row.price if model is PricingModel.ON_DEMAND else row.spot
    host = row.host_price if model is PricingModel.ON_DEMAND else row.host_spot
    if total is None or host is None:
        return None
    return PriceParts(host=host, accelerators=total - host)


def _combine_gcp(rows: list[_Row], out: Imported) -> list[_Row]:
    """Host rows joined to the accelerator rows of the same zone: one row per configuration."""
    accel = {(r.gpu, r.count, r.zone): r for r in rows if not r.instance_type and r.gpu}
    combined: list[_Row] = []
    unmatched: set[str] = set()
    for host in (r for r in rows if r.instance_type):
        for gpu, count, name in _gcp_configurations(host, accel):
            part = accel.get((gpu, count, host.zone))
            if part is None:
                unmatched.add(host.instance_type)
                continue
            combined.append(_join(host, part, name))
    if unmatched:
        shown = ", ".join(sorted(unmatched)[:6])
        out.notices.append(f"{out.path}: no accelerator row in the same zone for {shown}")
    return combined


def _gcp_configurations(
    host: _Row, accel: dict[tuple[str, float, str], _Row]
) -> list[tuple[str, float, str]]:
    """(SkyPilot GPU name, count, offer name) for a GCP host machine type."""
    name = host.instance_type
    family = family_of(name)
    if family is not None:
        count = fixed_gpu_count(name)
        if family.skypilot_gpu is None or not count:
            return []
        return [(family.skypilot_gpu, float(count), name)]
    n1 = re.match(r"^n1-standard-(\d+)$", name)
    if not n1:
        return []
    vcpus = int(n1.group(1))
    return [
        (gpu, count, f"{name}+{int(count)}x{NAME_FIXES.get(gpu, gpu)}")
        for gpu, count, zone in sorted(accel)
        if zone == host.zone and vcpus <= N1_LIMITS.get(gpu, {}).get(int(count), 0)
    ]


def _join(host: _Row, part: _Row, name: str) -> _Row:
    def add(a: Decimal | None, b: Decimal | None) -> Decimal | None:
        if a is None or b is None:
            return None
        # A zero part (a4-highgpu hosts read 0.0 upstream) is a placeholder: keep the
        # sum at zero so the gates drop it instead of pricing the GPUs alone.
        return a + b if a > 0 and b > 0 else Decimal(0)

    return _Row(
        instance_type=name,
        gpu=part.gpu,
        count=part.count,
        vcpus=host.vcpus,
        memory=host.memory,
        price=add(host.price, part.price),
        spot=add(host.spot, part.spot),
        region=host.region,
        zone=host.zone,
        host_price=host.price if part.price is not None else None,
        host_spot=host.spot if part.spot is not None else None,
    )
