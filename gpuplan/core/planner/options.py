"""Every way to run a workload on the catalog: placements, time, memory and cost.

An option is k instances of one type whose GPUs add up to the requested count (12 H100
on 8-GPU instances is rejected with that reason), in one region, under one pricing
model. A GPU no catalog sells still gets one unpriced option (``provider`` None),
priced only with ``price_per_gpu_hour``. Wall time: FLOPs / (GPUs x dense peak x steady-state
MFU), divided by goodput, averaged in log space with the 6ND rule of thumb
(:mod:`gpuplan.core.planner.central`), times the spot overhead where it applies.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from gpuplan.core.catalog.kinds import PricingModel, Provider
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.planner import comm
from gpuplan.core.planner.central import central_factor
from gpuplan.core.planner.feasibility import DEFAULT_MAX_HOURS, early_reasons, finish, who
from gpuplan.core.planner.flops import Flops, training_flops
from gpuplan.core.planner.plan import DEFAULT_GOODPUT, Option, PlanRequest, PlanResult
from gpuplan.core.planner.pricing import price_option
from gpuplan.core.planner.spot_realism import OutlierKey, spot_outliers
from gpuplan.core.planner.timing import Compute, compute_for
from gpuplan.core.wording import counted

if TYPE_CHECKING:
    from gpuplan.core.catalog.gpus import GpuSpec
    from gpuplan.core.catalog.offers import Offer

__all__ = [
    "DEFAULT_COUNTS",
    "DEFAULT_GOODPUT",
    "DEFAULT_MAX_HOURS",
    "UNSOLD_GPUS_PER_NODE",
    "Option",
    "PlanRequest",
    "PlanResult",
    "enumerate_options",
]

DEFAULT_COUNTS = tuple(float(2**k) for k in range(11))
"""Without ``--gpus``: 1, 2, 4 ... 1024 GPUs."""
UNSOLD_GPUS_PER_NODE = 8
_OPTION_FIELDS = tuple(f.name for f in fields(Option))


@dataclass(frozen=True)
class _Placement:
    spec: GpuSpec
    count: float
    offer: Offer | None
    gpus_per_node: float
    nodes: int


def enumerate_options(catalog: Catalog, request: PlanRequest) -> tuple[list[Option], Flops]:
    """All options, feasible or not, unranked."""
    flops = training_flops(request.workload)
    counts = request.counts or DEFAULT_COUNTS
    cache: dict[_Key, tuple[Compute, tuple[str, ...]]] = {}
    outliers = spot_outliers(catalog.offers)
    out: list[Option] = []
    by_gpu: dict[str, list[Offer]] = {}
    for offer in catalog.offers:
        by_gpu.setdefault(offer.gpu, []).append(offer)
    for spec in _specs(catalog, request):
        offers = [o for o in by_gpu.get(spec.name, ()) if _wanted(o, request)]
        sold = spec.name in by_gpu
        if sold and not offers and request.price_per_gpu_hour is None:
            out.append(_unsold_here(spec.name, request))
            continue
        for count in counts:
            for placement, rejected in _placements(spec, count, offers, sold, request):
                if rejected:
                    out.append(rejected)
                    continue
                assert placement is not None
                out.extend(_flag(_priced(placement, request, flops, cache), outliers))
    return out, flops


def _flag(options: list[Option], outliers: dict[OutlierKey, str]) -> list[Option]:
    """Mark spot options whose price is far below the same instance elsewhere."""
    if not outliers:
        return options
    out = []
    for option in options:
        if option.pricing == _SPOT:
            key = (
                option.provider.value if option.provider else "",
                option.instance_type or "",
                option.region or "",
            )
            if key in outliers:
                option = _replace(option, spot_outlier=outliers[key])
        out.append(option)
    return out


_SPOT = PricingModel.SPOT.value


def _unsold_here(gpu: str, request: PlanRequest) -> Option:
    where = []
    if request.providers:
        where.append("provider " + ", ".join(sorted(p.value for p in request.providers)))
    if request.regions:
        where.append("region " + ", ".join(sorted(request.regions)))
    why = f"{gpu}: no catalog offer in {' and '.join(where) or 'the catalog'}"
    return Option(gpu, 0, 0, 0, None, None, None, None, reasons=(why,))


def _specs(catalog: Catalog, request: PlanRequest) -> list[GpuSpec]:
    if request.gpus:
        return [catalog.gpus.get(name) for name in request.gpus]
    sold = {o.gpu for o in catalog.offers}
    return [spec for spec in catalog.gpus if spec.name in sold]


def _wanted(offer: Offer, request: PlanRequest) -> bool:
    if request.providers and offer.provider not in request.providers:
        return False
    return not (request.regions and offer.region not in request.regions)


def _placements(
    spec: GpuSpec, count: float, offers: list[Offer], sold: bool, request: PlanRequest
) -> Iterator[tuple[_Placement | None, Option | None]]:
    unpriced = not sold or request.price_per_gpu_hour is not None
    if unpriced and not (request.providers or request.regions):
        per_node = min(count, UNSOLD_GPUS_PER_NODE)
        nodes = max(1, math.ceil(count / UNSOLD_GPUS_PER_NODE))
        yield _Placement(spec, count, None, per_node, nodes), None
    elif not sold:
        why = f"no catalog sells {spec.name}, so no provider or region can match the filter"
        yield None, Option(spec.name, count, 0, 0, None, None, None, None, reasons=(why,))
    rejected_types: set[tuple[Provider, str]] = set()
    largest = _largest_sizes(offers, count)
    for offer in offers:
        per = offer.gpu_count
        fits = per == count if count < 1 or per < 1 else count % per == 0
        if fits:
            bigger = largest.get((offer.provider, offer.region))
            if count > per and bigger is not None and bigger.gpu_count > per:
                if (offer.provider, offer.instance_type) not in rejected_types:
                    rejected_types.add((offer.provider, offer.instance_type))
                    yield None, _dominated(spec, count, offer, bigger)
                continue
            nodes = max(1, round(count / per)) if per >= 1 else 1
            yield _Placement(spec, count, offer, per, nodes), None
        elif (offer.provider, offer.instance_type) not in rejected_types:
            rejected_types.add((offer.provider, offer.instance_type))
            why = (
                f"{counted(count, 'GPU')} is not a whole number of {offer.instance_type} "
                f"({per:g} x {spec.name} each)"
            )
            yield (
                None,
                Option(
                    spec.name,
                    count,
                    0,
                    per,
                    offer.provider,
                    offer.instance_type,
                    None,
                    None,
                    reasons=(why,),
                ),
            )


def _largest_sizes(offers: list[Offer], count: float) -> dict[tuple[Provider, str], Offer]:
    """Per provider and region, the largest instance whose GPUs divide ``count``."""
    best: dict[tuple[Provider, str], Offer] = {}
    for offer in offers:
        per = offer.gpu_count
        if per < 1 or count < 1 or count % per:
            continue
        key = (offer.provider, offer.region)
        if key not in best or per > best[key].gpu_count:
            best[key] = offer
    return best


def _dominated(spec: GpuSpec, count: float, offer: Offer, bigger: Offer) -> Option:
    nodes = round(count / offer.gpu_count)
    why = (
        f"{nodes} x {offer.instance_type} ({counted(offer.gpu_count, 'GPU')} each): "
        f"{bigger.instance_type} ({counted(bigger.gpu_count, 'GPU')}) in the same regions makes "
        f"{count:g} GPUs with fewer, NVLink-joined nodes"
    )
    return Option(
        spec.name,
        count,
        nodes,
        offer.gpu_count,
        offer.provider,
        offer.instance_type,
        offer.region,
        None,
        reasons=(why,),
    )


_Key = tuple[str, float, float, int, float | None]


def _priced(
    placement: _Placement,
    request: PlanRequest,
    flops: Flops,
    cache: dict[_Key, tuple[Compute, tuple[str, ...]]],
) -> list[Option]:
    """The placement under each pricing model. Compute and the reasons that hold whatever
    the price depend only on the GPU, count, node shape and network: worked out once for
    every region and instance type sharing them."""
    offer = placement.offer
    network = comm.offer_fabric(offer.network_gbps, offer.interconnect) if offer else None
    key = (placement.spec.name, placement.count, placement.gpus_per_node, placement.nodes, network)
    known = cache.get(key)
    if known is None:
        compute = compute_for(
            placement.spec,
            request.workload,
            flops,
            placement.count,
            placement.gpus_per_node,
            placement.nodes,
            network,
            mfu_override=request.mfu,
            throughput=request.throughput,
        )
    else:
        compute = known[0]
    factor = 1.0 if request.goodput_given else central_factor(compute.mfu, flops)
    hours = compute.compute_hours / request.goodput * factor
    base = Option(
        placement.spec.name,
        placement.count,
        placement.nodes,
        placement.gpus_per_node,
        offer.provider if offer else None,
        offer.instance_type if offer else None,
        offer.region if offer else None,
        None,
        compute,
        rule_of_thumb_factor=factor,
    )
    if known is None:
        known = compute, tuple(early_reasons(compute, hours, request, base))
        cache[key] = known
    early = known[1]
    if early:
        # Infeasible under every pricing model: one record for the placement, not one each.
        notes = compute.notes + compute.suggestions
        return [_replace(base, hours=hours, notes=notes, reasons=early)]
    priced = price_option(base, offer, request, hours)
    if not priced:
        wanted = ", ".join(sorted(p.value for p in request.pricing)) or "any pricing"
        why = f"{who(base)} on {base.instance_type} in {base.region}: no {wanted} price"
        return [_replace(base, hours=hours, reasons=(why,))]
    return [finish(option, request) for option in priced]


def _replace(option: Option, **changes: object) -> Option:
    """``dataclasses.replace`` for an :class:`Option`, without its per-call field checks
    (thousands of calls on the estimate path)."""
    values = {name: getattr(option, name) for name in _OPTION_FIELDS}
    values.update(changes)
    return Option(**values)
