"""Instance-type discovery, decided purely: what the providers list, matched to the GPU table.

The provider edges list the GPU instance types each region offers (AWS
``DescribeInstanceTypes`` with ``GpuInfo``, GCP ``machineTypes`` with their accelerators,
Azure resource SKUs) as :class:`FoundType` values that name the GPU *as the provider
names it*. This module turns the types the catalog does not know yet into shapes (offers
without prices) for the refresh to price, when the GPU resolves in the spec table; a GPU
that does not resolve is reported by name with its instance types and never guessed.
Every number of a found type (GPUs, memory per GPU, vCPUs, memory, network) passes the
one check of provider numbers (:mod:`gpuplan.core.catalog.provider_values`); a type with an
implausible one (10^20 GPUs, NaN memory) is reported and never added.

No clock, files or network here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date

from gpuplan.core.catalog.gpus import GpuTable
from gpuplan.core.catalog.offers import Offer, Provider
from gpuplan.core.catalog.provider_values import Quantity, value_problem

# Template date of a discovered shape; the refresh stamps real offers with its own date.
_SHAPE_DATE = date(1970, 1, 1)


@dataclass(frozen=True)
class FoundType:
    """One GPU instance type a provider's API lists in one region."""

    instance_type: str
    region: str
    gpu_name: str
    """The GPU as the provider names it (``B300``, ``nvidia-b200``, ``MI300X``)."""
    gpu_count: float
    vcpus: int
    memory_gb: float
    gpu_memory_gb: float | None = None
    """Per GPU, when the API says."""
    network_gbps: float | None = None
    interconnect: str = ""
    candidates: tuple[str, ...] = ()
    """Other spellings to try when ``gpu_name`` does not resolve (Azure size-name segments)."""


@dataclass
class Discovery:
    """What one provider's listing gave: types per region, and the regions that failed."""

    provider: Provider
    found: list[FoundType] = field(default_factory=list)
    regions: set[str] = field(default_factory=set)
    """Regions listed completely."""
    failures: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class UnknownGpu:
    """A GPU model the spec table cannot resolve, with where it was seen."""

    name: str
    instance_types: tuple[str, ...]
    regions: tuple[str, ...]

    def message(self) -> str:
        types = ", ".join(self.instance_types)
        return (
            f"unknown GPU {self.name!r} on {types} ({', '.join(self.regions)}); not added: "
            "add it to gpus.toml (with its source) to price these types"
        )


def resolve_gpu(found: FoundType, gpus: GpuTable) -> str | None:
    """The canonical GPU name of a found type, or None when the spec table lacks it.

    The memory-qualified spelling is tried first (``A100`` with 80 GB is ``A100-80GB``;
    a bare ``A100`` is ambiguous on purpose), then the name alone.
    """
    if found.gpu_memory_gb:
        spec = gpus.lookup(f"{found.gpu_name}-{round(found.gpu_memory_gb)}gb")
        if spec is not None:
            return spec.name
    for name in (found.gpu_name, *found.candidates):
        spec = gpus.lookup(name)
        if spec is not None:
            return spec.name
    return None


@dataclass
class NewShapes:
    """Shapes for types the catalog lacks, where each was seen, and the unknown GPUs."""

    shapes: dict[str, Offer] = field(default_factory=dict)
    seen: dict[str, set[str]] = field(default_factory=dict)
    """Instance type -> regions that list it."""
    unknown: list[UnknownGpu] = field(default_factory=list)
    implausible: list[str] = field(default_factory=list)
    """``type in region: why`` for each found type refused for an implausible number."""


def found_problem(found: FoundType) -> str | None:
    """Why a found type's numbers are implausible; None when every one is plausible."""
    checks = [
        (Quantity.GPU_COUNT, found.gpu_count),
        (Quantity.VCPUS, found.vcpus),
        (Quantity.MEMORY_GB, found.memory_gb),
    ]
    if found.gpu_memory_gb is not None:
        checks.append((Quantity.GPU_MEMORY_GB, found.gpu_memory_gb))
    if found.network_gbps is not None:
        checks.append((Quantity.NETWORK_GBPS, found.network_gbps))
    return next((why for q, v in checks if (why := value_problem(q, v))), None)


def new_shapes(
    provider: Provider, found: Iterable[FoundType], gpus: GpuTable, known: Mapping[str, Offer]
) -> NewShapes:
    """Shapes (price-less offers) for found types not in ``known``, GPU from the table."""
    out = NewShapes()
    unknown: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for item in sorted(found, key=lambda f: (f.instance_type, f.region)):
        if item.instance_type in known:
            continue
        why = found_problem(item)
        if why is not None:
            out.implausible.append(f"{item.instance_type} in {item.region}: {why}"[:300])
            continue
        canonical = resolve_gpu(item, gpus)
        if canonical is None:
            unknown[item.gpu_name][item.instance_type].add(item.region)
            continue
        out.seen.setdefault(item.instance_type, set()).add(item.region)
        if item.instance_type in out.shapes:
            continue
        spec = gpus.get(canonical)
        out.shapes[item.instance_type] = Offer(
            provider=provider,
            instance_type=item.instance_type,
            region=item.region,
            gpu=canonical,
            gpu_count=item.gpu_count,
            gpu_memory_gb=item.gpu_memory_gb or spec.memory_gb,
            vcpus=item.vcpus,
            memory_gb=item.memory_gb,
            interconnect=item.interconnect,
            network_gbps=item.network_gbps,
            as_of=_SHAPE_DATE,
            source="",
        )
    for name in sorted(unknown):
        types = unknown[name]
        regions = sorted({r for rs in types.values() for r in rs})
        out.unknown.append(UnknownGpu(name, tuple(sorted(types)), tuple(regions)))
    return out


def missing_types(
    known: Iterable[Offer], found: Iterable[FoundType], listed_regions: Iterable[str]
) -> list[tuple[str, str]]:
    """(type, region) the catalog has in a completely listed region that the API omits.

    Catalog configurations (GCP ``n1-standard-8+1xT4``: a host with attached GPUs) are
    not machine types an API lists, so they are left out.
    """
    listed = set(listed_regions)
    present = {(f.instance_type, f.region) for f in found}
    return sorted(
        {
            (o.instance_type, o.region)
            for o in known
            if o.region in listed
            and "+" not in o.instance_type
            and (o.instance_type, o.region) not in present
        }
    )
