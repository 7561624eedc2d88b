"""GPU instances as the lifecycle manager sees them, whatever cloud they run on.

Providers map their SDK payloads to these models right at the edge; everything that
decides (budget, idle verdicts, action plans) works on these values only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from gpuplan.core.catalog.offers import PricingModel, Provider
from gpuplan.core.wording import plural

GpuSeries = Mapping[str, Mapping[datetime, float]]
"""One signal per GPU of one instance: GPU key (index) -> period start (UTC) -> value."""

PeriodSeries = Mapping[datetime, float]
"""One value per period start (UTC)."""


@dataclass(frozen=True)
class HostSamples:
    """Everything a metrics source read for one instance, each signal a declared field.

    Every metrics read answers ``instance id -> HostSamples``; ``memory`` and ``cpu``
    are the signals the idle decision uses to tell a paused job from an abandoned
    machine, empty when the source has none.
    """

    utilisation: GpuSeries = field(default_factory=dict)
    """GPU key -> period start -> GPU utilisation, percent (max over the period)."""
    memory: GpuSeries = field(default_factory=dict)
    """GPU key -> period start -> GPU memory in use, percent of that GPU's total (max)."""
    cpu: PeriodSeries = field(default_factory=dict)
    """Period start -> instance CPU utilisation, percent (all cores)."""
    matched_by: str | None = None
    """How the series were tied to the instance when not by its id (host name, unique)."""


class InstanceState(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"
    SUSPENDED = "suspended"
    DEALLOCATED = "deallocated"
    TERMINATED = "terminated"
    UNKNOWN = "unknown"

    @property
    def bills_compute(self) -> bool:
        """Whether the GPU is billed in this state (stopping still bills on most clouds)."""
        return self in (InstanceState.PENDING, InstanceState.RUNNING, InstanceState.STOPPING)


class Action(StrEnum):
    """What a policy can ask for. Azure's ``stop`` is carried out as deallocate."""

    STOP = "stop"
    HIBERNATE = "hibernate"
    SUSPEND = "suspend"
    DEALLOCATE = "deallocate"
    TERMINATE = "terminate"
    NOTIFY = "notify"
    NONE = "none"
    START = "start"
    """Start a stopped instance again (``gpuplan schedule`` at on-hours, only what it
    stopped itself); never a policy's idle action."""


ACTING = (Action.STOP, Action.HIBERNATE, Action.SUSPEND, Action.DEALLOCATE, Action.TERMINATE)
"""The actions that call the cloud (``notify`` and ``none`` do not)."""
RESTORING = (Action.START,)
"""Actions that call the cloud to undo a stop: never a policy's idle action, erase
nothing, and a cloud without a row for one refuses it
(:func:`gpuplan.core.lifecycle.actions.entry`)."""
DATA_ACTIONS = frozenset(ACTING)
"""Every acting action erases local instance storage on every cloud (stop included)."""


class Capability(StrEnum):
    """What a provider adapter can do; declared per provider, checked before acting."""

    LIST = "list"
    METRICS = "metrics"
    STOP = "stop"
    HIBERNATE = "hibernate"
    SUSPEND = "suspend"
    DEALLOCATE = "deallocate"
    TERMINATE = "terminate"
    TAG = "tag"
    START = "start"


NEEDS: dict[Action, Capability] = {
    Action.STOP: Capability.STOP,
    Action.HIBERNATE: Capability.HIBERNATE,
    Action.SUSPEND: Capability.SUSPEND,
    Action.DEALLOCATE: Capability.DEALLOCATE,
    Action.TERMINATE: Capability.TERMINATE,
    Action.START: Capability.START,
}
"""The capability an adapter declares for each acting action (one entry per action)."""


class RiskFacts(BaseModel):
    """Facts about one instance that decide whether an action is safe, typed so that a
    misspelt key cannot silently switch a data-loss check off."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    hibernation_enabled: bool = False
    """Launched with hibernation configured (AWS, Azure): only then can it hibernate."""
    spot_one_time: bool = False
    """A spot instance that ends at interruption (AWS one-time request, Azure eviction
    policy Delete): it cannot be stopped, only terminated."""
    root_instance_store: bool = False
    """AWS instance-store root device: the instance cannot be stopped at all."""
    instance_store_gb: int = Field(default=0, ge=0)
    """AWS instance-store (local NVMe) volumes on any device: erased by stop, hibernate
    and terminate."""
    local_ssd_count: int = Field(default=0, ge=0)
    """GCP local SSDs: erased by stop, suspend and delete."""
    temp_disk_gb: int | None = Field(default=0, ge=0)
    """Azure temporary (resource) disk of the VM size: erased by deallocate, hibernate
    and delete. None when the size's disk could not be read (treated as present)."""
    erases: str = ""
    """What every acting action erases here, in words, where the fields above do not say
    it (a Kubernetes bare pod's emptyDir); empty when nothing."""
    refused: str = ""
    """Why no action may touch this unit, whatever the policy (a DaemonSet, a protected
    namespace, an opt-out, a disruption budget); empty when actions are allowed."""
    undo: str = ""
    """How an acting action is undone (recorded with the intent); empty when not said."""

    def erased_by(self, action: Action) -> str:
        """What ``action`` would erase on this instance, or "" when nothing local."""
        if action not in DATA_ACTIONS:
            return ""
        if self.instance_store_gb:
            return f"{self.instance_store_gb} GB of instance-store (NVMe) data"
        if self.root_instance_store:
            return "the instance-store root volume"
        if self.local_ssd_count:
            return f"data on {plural(self.local_ssd_count, 'local SSD')}"
        if self.temp_disk_gb is None:
            return "the temporary disk (its size could not be read)"
        if self.temp_disk_gb:
            return f"the {self.temp_disk_gb} GB temporary disk"
        return self.erases


class GpuInstance(BaseModel):
    """One GPU instance in scope of a policy, as listed by a provider."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    provider: Provider
    account: str
    """AWS account or region scope, GCP project, Azure subscription."""
    region: str
    zone: str | None = None
    instance_id: str
    """The provider's id (AWS ``i-...``, GCP numeric id, Azure resource id)."""
    name: str | None = None
    instance_type: str
    state: InstanceState
    started_at: datetime | None = None
    """Launch time or last start, timezone-aware UTC; None when the provider does not say."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Tags (AWS, Azure) or labels (GCP)."""
    pricing: PricingModel = PricingModel.ON_DEMAND
    """How the instance is billed: on_demand or spot (reserved is a billing overlay)."""
    gpu: str | None = None
    """Canonical GPU name, None when the type is not in the catalog."""
    gpu_count: float = 0
    hourly_usd: Decimal | None = None
    """Catalog price for this type, region and pricing model; None when unknown."""
    managed_by: str | None = None
    """A managed service that owns the instance (Auto Scaling group, MIG, scale set...)."""
    risk: RiskFacts = Field(default_factory=lambda: RiskFacts())
    """What an action would cost beyond compute: data erased, an instance that cannot return."""
    attributes: dict[str, str] = Field(default_factory=dict)
    """Addressing facts for the adapter itself (resource group, VM id, private DNS name);
    nothing here changes what the planner decides."""


def label_mismatch(labels: Mapping[str, str], wanted: Mapping[str, str]) -> str | None:
    """Why ``labels`` miss a policy's ``match_labels``, or None when every one matches.

    The one scope check on labels: the idle decision and the policy's scope rules both
    ask it, so an instance is in or out of scope the same way everywhere.
    """
    missing = {k: v for k, v in wanted.items() if labels.get(k) != v}
    if not missing:
        return None
    shown = ", ".join(f"{k}={v}" for k, v in sorted(missing.items()))
    return f"labels do not match the policy ({shown})"
