"""Azure VMs -> :class:`GpuInstance`: GPU sizes, power state, Spot, scale-set ownership.

GPU facts come from the catalog for the size, else from the subscription's resource
SKUs (capability ``GPUs``) for sizes of the GPU families (``Standard_N*``), asked once
per location per run. Anything else is not a GPU VM and is left out. The same SKUs
give the size's temporary disk (``MaxResourceVolumeMB``), which deallocate erases; a
size the SKUs do not describe has an unknown temporary disk, and the planner treats
unknown as present.

Azure keeps no last-start time on the VM; ``started_at`` is the creation time. The
provisioning-state time is not used: a tag change moves it, which would restart the
grace period on every notice tag. A VM started minutes ago still cannot be called
idle, since its window lacks coverage.

Power states: only ``deallocated`` stops compute billing. A ``stopped`` (powered-off)
VM still bills; it carries ``bills_while_stopped=true`` so the fleet can say so.
VMs with a ``virtualMachineScaleSet`` reference are Flexible scale-set members: their
scale set owns them (``managed``). Uniform scale-set instances do not appear in the VM
listing at all; the adapter reports GPU scale sets as a notice instead.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from enum import Enum
from typing import TYPE_CHECKING, Any

from gpuplan.core.catalog.offers import PricingModel
from gpuplan.core.lifecycle.instances import GpuInstance, InstanceState, RiskFacts
from gpuplan.providers.azure.facts import AZURE
from gpuplan.providers.catalog_view import CatalogView

if TYPE_CHECKING:
    from azure.mgmt.compute.models import VirtualMachine

GPU_FAMILY = re.compile(r"^Standard_N", re.IGNORECASE)
_POWER = {
    "running": InstanceState.RUNNING,
    "starting": InstanceState.PENDING,
    "stopping": InstanceState.STOPPING,
    "deallocating": InstanceState.STOPPING,
    "stopped": InstanceState.STOPPED,
    "deallocated": InstanceState.DEALLOCATED,
}
_RG = re.compile(r"/resourceGroups/([^/]+)/", re.IGNORECASE)


@dataclass(frozen=True)
class SizeFacts:
    gpu: str | None
    gpu_count: float


def text(value: Any) -> str:
    """An SDK enum member's wire value (``Spot``), or the string itself."""
    return str(value.value) if isinstance(value, Enum) else str(value)


def resource_group(resource_id: str) -> str:
    match = _RG.search(resource_id)
    return match.group(1) if match else ""


def last_segment(resource_id: str) -> str:
    return resource_id.rstrip("/").rsplit("/", 1)[-1]


def sku_capability(skus: Iterable[Any], name: str) -> dict[str, float]:
    """VM size (lower case) -> the number in capability ``name`` (``GPUs``,
    ``MaxResourceVolumeMB``), from ``resource_skus.list`` entries."""
    out: dict[str, float] = {}
    for sku in skus:
        if (getattr(sku, "resource_type", "") or "").lower() != "virtualmachines":
            continue
        for capability in getattr(sku, "capabilities", None) or ():
            if capability.name == name:
                try:
                    out[str(sku.name).lower()] = float(capability.value)
                except (TypeError, ValueError):
                    continue
    return out


def sku_gpu_counts(skus: Iterable[Any]) -> dict[str, float]:
    """VM size (lower case) -> GPUs."""
    return sku_capability(skus, "GPUs")


def size_facts(size: str, catalog: CatalogView, sku_gpus: dict[str, float]) -> SizeFacts:
    offer = catalog.offer(size)
    if offer is not None:
        return SizeFacts(offer.gpu, offer.gpu_count)
    return SizeFacts(None, sku_gpus.get(size.lower(), 0.0))


def power_state(vm: VirtualMachine) -> InstanceState:
    view = vm.properties.instance_view if vm.properties else None
    for status in (view.statuses if view else None) or ():
        code = status.code or ""
        if code.startswith("PowerState/"):
            return _POWER.get(code.split("/", 1)[1].lower(), InstanceState.UNKNOWN)
    return InstanceState.UNKNOWN


def to_instance(
    vm: VirtualMachine,
    *,
    subscription: str,
    catalog: CatalogView,
    sku_gpus: dict[str, float],
    temp_disk_mb: dict[str, float] | None = None,
) -> GpuInstance | None:
    """The GPU VM, or None when its size carries no GPU. ``temp_disk_mb``: size (lower
    case) -> temporary disk from the SKUs; a size missing there has an unknown disk."""
    props = vm.properties
    size = text(props.hardware_profile.vm_size) if props and props.hardware_profile else ""
    facts = size_facts(size, catalog, sku_gpus)
    if facts.gpu_count <= 0 or props is None:
        return None
    location = str(vm.location)
    spot = text(props.priority or "Regular").lower() in ("spot", "low")
    pricing = PricingModel.SPOT if spot else PricingModel.ON_DEMAND
    state = power_state(vm)
    scale_set = props.virtual_machine_scale_set.id if props.virtual_machine_scale_set else None
    offer = catalog.offer(size, location)
    hourly: Decimal | None = offer.price(pricing) if offer is not None else None
    attributes = _attributes(vm, spot=spot, state=state)
    temp_mb = (temp_disk_mb or {}).get(size.lower())
    risk = RiskFacts(
        hibernation_enabled=_hibernation(props),
        # Eviction policy Delete is the Azure twin of AWS's one-time spot request: the
        # VM ends at eviction and is never ours to stop, only to delete.
        spot_one_time=spot and attributes["eviction_policy"].lower() == "delete",
        temp_disk_gb=None if temp_mb is None else int(temp_mb // 1024),
    )
    return GpuInstance(
        provider=AZURE,
        account=subscription,
        region=location,
        zone=vm.zones[0] if vm.zones else None,
        instance_id=str(vm.id),
        name=vm.name,
        instance_type=size,
        state=state,
        started_at=_utc(props.time_created),
        labels=dict(vm.tags or {}),
        pricing=pricing,
        gpu=facts.gpu,
        gpu_count=facts.gpu_count,
        hourly_usd=hourly,
        managed_by=f"virtual machine scale set {last_segment(scale_set)}" if scale_set else None,
        risk=risk,
        attributes=attributes,
    )


def _attributes(vm: VirtualMachine, *, spot: bool, state: InstanceState) -> dict[str, str]:
    """Facts the planner and the fleet view need (eviction policy, billing when off)."""
    props: Any = vm.properties
    eviction = text(props.eviction_policy or "Deallocate") if spot else ""
    facts = {
        "resource_group": resource_group(str(vm.id)),
        "vm_id": str(props.vm_id or ""),
        "eviction_policy": eviction,
        "bills_while_stopped": "true" if state is InstanceState.STOPPED else "false",
    }
    return facts


def _hibernation(props: Any) -> bool:
    capabilities = getattr(props, "additional_capabilities", None)
    return bool(getattr(capabilities, "hibernation_enabled", False))


def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else moment.astimezone(UTC)


def uniform_gpu_scale_sets(
    scale_sets: Iterable[Any], catalog: CatalogView, sku_gpus: dict[str, float]
) -> list[str]:
    """Names of Uniform scale sets with GPU sizes (their VMs are not in the VM listing)."""
    out: list[str] = []
    for vmss in scale_sets:
        props = getattr(vmss, "properties", None)
        mode = text(getattr(props, "orchestration_mode", None) or "Uniform")
        size = text(vmss.sku.name) if vmss.sku else ""
        if mode.lower() != "uniform":
            continue
        if size_facts(size, catalog, sku_gpus).gpu_count > 0 or GPU_FAMILY.match(size):
            capacity = vmss.sku.capacity if vmss.sku else None
            out.append(f"{vmss.name} ({size} x {capacity})")
    return out
