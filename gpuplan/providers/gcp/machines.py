"""Compute Engine instances -> :class:`GpuInstance`: GPUs, state, pricing, ownership.

GPUs come from the catalog for the machine type first, then from ``guestAccelerators``
(n1 with attached T4/V100/P100, and what the API reports for accelerator-optimised
types), then from the fixed-GPU families (a2, a3, a4, g2) by name. A machine without
any of these is not a GPU instance and is left out.

Local SSDs (``SCRATCH`` disks) lose their data on stop, suspend and delete: the
instance carries ``risk.local_ssd_count`` so the planner skips it unless the policy
allows data loss.
Members of managed instance groups (GKE node pools included) say so in the
``created-by`` metadata item: stopping one only makes the group recreate it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from gpuplan.core.catalog.offers import Offer, PricingModel
from gpuplan.core.lifecycle.instances import GpuInstance, InstanceState, RiskFacts
from gpuplan.providers.catalog_view import CatalogView
from gpuplan.providers.gcp.facts import GCP
from gpuplan.providers.gcp.families import family_of, fixed_gpu_count

if TYPE_CHECKING:
    from google.cloud.compute_v1 import Instance

_STATES = {
    "PROVISIONING": InstanceState.PENDING,
    "STAGING": InstanceState.PENDING,
    "RUNNING": InstanceState.RUNNING,
    "REPAIRING": InstanceState.RUNNING,
    "STOPPING": InstanceState.STOPPING,
    "SUSPENDING": InstanceState.STOPPING,
    "SUSPENDED": InstanceState.SUSPENDED,
    # GCP's TERMINATED is a stopped instance (it still exists and can be started).
    "TERMINATED": InstanceState.STOPPED,
}
_MIG = re.compile(r"/instanceGroupManagers/([^/]+)$")


@dataclass(frozen=True)
class GpuFacts:
    gpu: str | None
    gpu_count: float


def last_segment(url: str) -> str:
    """``.../zones/us-central1-a/machineTypes/a2-highgpu-1g`` -> ``a2-highgpu-1g``."""
    return url.rstrip("/").rsplit("/", 1)[-1]


def region_of(zone: str) -> str:
    """``us-central1-a`` -> ``us-central1``."""
    return zone.rsplit("-", 1)[0]


def state_of(status: str) -> InstanceState:
    return _STATES.get(status, InstanceState.UNKNOWN)


def gpu_facts(instance: Instance, machine_type: str, catalog: CatalogView) -> GpuFacts:
    offer = catalog.offer(machine_type)
    if offer is not None:
        return GpuFacts(offer.gpu, offer.gpu_count)
    accelerators = [a for a in instance.guest_accelerators if a.accelerator_count > 0]
    if accelerators:
        raw = last_segment(accelerators[0].accelerator_type)
        spec = catalog.gpu(raw)
        count = sum(a.accelerator_count for a in accelerators)
        return GpuFacts(spec.name if spec is not None else raw, count)
    return family_gpus(machine_type)


def family_gpus(machine_type: str) -> GpuFacts:
    """GPUs of a fixed-GPU family by name; ``GpuFacts(None, 0)`` for anything else."""
    family = family_of(machine_type)
    if family is None:
        return GpuFacts(None, 0)
    return GpuFacts(family.gpu, fixed_gpu_count(machine_type))


def managed_by(instance: Instance) -> str | None:
    """The managed instance group that owns the instance (GKE node pools are MIGs)."""
    items = {item.key: item.value for item in instance.metadata.items}
    created_by = items.get("created-by", "")
    match = _MIG.search(created_by)
    if match:
        if "goog-gke-node" in instance.labels or "gke-" in match.group(1):
            return f"GKE node pool (managed instance group {match.group(1)})"
        return f"managed instance group {match.group(1)}"
    if "goog-gke-node" in instance.labels:
        return "GKE node pool"
    return None


def parse_time(text: str) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return None


def pricing_of(instance: Instance) -> PricingModel:
    scheduling = instance.scheduling
    spot = scheduling.provisioning_model == "SPOT" or bool(scheduling.preemptible)
    return PricingModel.SPOT if spot else PricingModel.ON_DEMAND


def hourly_price(offer: Offer | None, pricing: PricingModel) -> Decimal | None:
    if offer is None:
        return None
    return offer.price(pricing)


def to_instance(instance: Instance, *, project: str, catalog: CatalogView) -> GpuInstance | None:
    """The GPU instance, or None when the machine carries no GPU."""
    machine_type = last_segment(instance.machine_type)
    facts = gpu_facts(instance, machine_type, catalog)
    if facts.gpu_count <= 0:
        return None
    zone = last_segment(instance.zone)
    region = region_of(zone)
    pricing = pricing_of(instance)
    local_ssds = [d for d in instance.disks if d.type_ == "SCRATCH"]
    attributes = {
        "label_fingerprint": instance.label_fingerprint,
        "termination_action": instance.scheduling.instance_termination_action or "",
    }
    started = parse_time(instance.last_start_timestamp) or parse_time(instance.creation_timestamp)
    stopped = parse_time(instance.last_stop_timestamp)
    if stopped is not None and instance.status == "TERMINATED":
        attributes["stopped_at"] = stopped.isoformat()  # lifetimes' stopped_for
    return GpuInstance(
        provider=GCP,
        account=project,
        region=region,
        zone=zone,
        instance_id=str(instance.id),
        name=instance.name,
        instance_type=machine_type,
        state=state_of(instance.status),
        started_at=started,
        labels=dict(instance.labels),
        pricing=pricing,
        gpu=facts.gpu,
        gpu_count=facts.gpu_count,
        hourly_usd=hourly_price(catalog.offer(machine_type, region), pricing),
        managed_by=managed_by(instance),
        risk=RiskFacts(local_ssd_count=len(local_ssds)),
        attributes=attributes,
    )
