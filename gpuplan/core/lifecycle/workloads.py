"""GPU workloads on Kubernetes: who holds which GPUs, what that costs, and what may be touched.

Pure: nodes, pods and disruption budgets come in as values (the provider maps the API's
objects to them at the edge); prices, shares, stranded GPUs and refusals go out.

- A node's hourly price is the catalog's, by its instance type, region and capacity type
  (spot or on-demand); a spot node whose offer has no spot price is not priced (never the
  on-demand price in its place).
- A pod's share is its GPUs / the node's allocatable GPUs x the node's price. A node that
  shares GPUs (time-slicing replicas, MIG slices) is reported as such and its pods are not
  priced: a slice's cost depends on a split the API does not state.
- Stranded GPUs: allocatable, requested by no pod; their dollars per hour per node.
- A workload is what a person manages: a pod's owner followed through ``ownerReferences``
  (Deployment, StatefulSet, Job, CronJob, Notebook, DaemonSet, or the bare pod itself).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal

from gpuplan.core.catalog.offers import Offer, PricingModel

BARE_POD = "Pod"
SCALED = ("Deployment", "StatefulSet")
SUSPENDED = ("Job", "CronJob")
NOTEBOOK = "Notebook"
NEVER_KINDS = {"DaemonSet": "DaemonSet pods run on every node by design: never touched"}


@dataclass(frozen=True)
class GpuNode:
    """A node with GPUs, as the API lists it."""

    name: str
    instance_type: str
    region: str
    zone: str | None
    pricing: PricingModel
    gpus: int
    """Allocatable GPUs (``nvidia.com/gpu``, ``amd.com/gpu``)."""
    sharing: str = ""
    """Time-slicing or MIG, in words; empty when each GPU is whole."""
    hourly_usd: Decimal | None = None


@dataclass(frozen=True)
class Owner:
    """What a person manages: the top of a pod's ``ownerReferences`` chain."""

    kind: str
    name: str


@dataclass(frozen=True)
class GpuPod:
    """A pod requesting GPUs."""

    namespace: str
    name: str
    node: str
    gpus: int
    owner: Owner
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)
    started_at: datetime | None = None
    cpu_cores: float | None = None
    """The pod's CPU request (limit when no request), cores; None when neither is set."""
    empty_dir: bool = False
    """The pod mounts an ``emptyDir``: deleting it erases that data."""


@dataclass(frozen=True)
class Budget:
    """A PodDisruptionBudget: its selector and what it allows now."""

    name: str
    namespace: str
    match_labels: Mapping[str, str]
    expressions: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    """``matchExpressions`` as (key, operator, values)."""
    disruptions_allowed: int = 0
    min_available: str | None = None
    """As written (``1``, ``50%``); None when the budget sets ``maxUnavailable``."""

    def selects(self, labels: Mapping[str, str]) -> bool:
        if any(labels.get(k) != v for k, v in self.match_labels.items()):
            return False
        for key, op, values in self.expressions:
            present = key in labels
            ok = {
                "In": present and labels.get(key) in values,
                "NotIn": not present or labels.get(key) not in values,
                "Exists": present,
                "DoesNotExist": not present,
            }.get(op, False)
            if not ok:
                return False
        return bool(self.match_labels or self.expressions)


@dataclass(frozen=True)
class Workload:
    """One owner's GPU pods in one namespace: the unit gpuplan judges, prices and acts on."""

    namespace: str
    owner: Owner
    pods: tuple[GpuPod, ...]

    @property
    def key(self) -> str:
        """``namespace/Kind/name``: the unit's id everywhere (ledger, ``--instance``)."""
        return f"{self.namespace}/{self.owner.kind}/{self.owner.name}"

    @property
    def gpus(self) -> int:
        return sum(p.gpus for p in self.pods)


@dataclass(frozen=True)
class Stranded:
    """GPUs a node offers that no pod requests."""

    node: GpuNode
    gpus: int
    hourly_usd: Decimal | None


def node_price(
    offers: Iterable[Offer], instance_type: str, region: str, pricing: PricingModel
) -> Decimal | None:
    """The catalog's hourly price of this type in this region for this capacity type."""
    wanted = instance_type.lower()
    for offer in offers:
        if offer.instance_type.lower() == wanted and offer.region == region:
            return offer.price(pricing)
    return None


def share(gpus: int, node: GpuNode) -> Decimal | None:
    """A pod's part of its node's price: its GPUs / the node's GPUs x the hourly price."""
    if node.hourly_usd is None or node.gpus <= 0 or node.sharing:
        return None
    return node.hourly_usd * Decimal(gpus) / Decimal(node.gpus)


def workload_hourly(workload: Workload, nodes: Mapping[str, GpuNode]) -> Decimal | None:
    """The sum of its pods' shares; None when any pod's node is unpriced or unknown."""
    total = Decimal(0)
    for pod in workload.pods:
        node = nodes.get(pod.node)
        part = share(pod.gpus, node) if node is not None else None
        if part is None:
            return None
        total += part
    return total


def stranded(nodes: Iterable[GpuNode], pods: Iterable[GpuPod]) -> list[Stranded]:
    """Per node with GPUs nobody requests: how many, and their dollars per hour."""
    used: dict[str, int] = {}
    for pod in pods:
        used[pod.node] = used.get(pod.node, 0) + pod.gpus
    out = []
    for node in nodes:
        free = node.gpus - used.get(node.name, 0)
        if free > 0 and not node.sharing:
            out.append(Stranded(node, free, share(free, node)))
    return out


def group(pods: Iterable[GpuPod]) -> list[Workload]:
    """Pods grouped by (namespace, owner), sorted by key."""
    found: dict[tuple[str, Owner], list[GpuPod]] = {}
    for pod in pods:
        found.setdefault((pod.namespace, pod.owner), []).append(pod)
    units = [Workload(ns, owner, tuple(ps)) for (ns, owner), ps in found.items()]
    return sorted(units, key=lambda w: w.key)


def refusal(
    workload: Workload,
    *,
    protected: Sequence[str],
    opt_out: str,
    budgets: Sequence[Budget],
) -> str:
    """Why no action may touch this workload; empty when one may."""
    if workload.owner.kind in NEVER_KINDS:
        return NEVER_KINDS[workload.owner.kind]
    if workload.namespace in protected:
        return f"namespace {workload.namespace} is never touched"
    for pod in workload.pods:
        found = opted_out([*pod.labels, *pod.annotations], opt_out)
        if found:
            return f"opted out: pod {pod.name} carries {found}"
    for budget in budgets:
        if budget.namespace != workload.namespace:
            continue
        held = [p for p in workload.pods if budget.selects(p.labels)]
        if held and budget.disruptions_allowed < len(held):
            return (
                f"PodDisruptionBudget {budget.name} allows {budget.disruptions_allowed} "
                f"disruption(s); stopping takes down {len(held)} pod(s)"
            )
    return ""


OPT_OUT_NAMES = frozenset({"opt-out", "optout", "keep", "exempt", "skip", "ignore"})
"""Key names that opt a pod out under a gpuplan prefix (``gpuplan.io/opt-out``,
``gpuplan/keep``), besides the policy's own key: an opt-out is never missed for its
spelling."""


def opted_out(keys: Iterable[str], opt_out: str) -> str:
    """The label or annotation key that opts a pod out; empty when none does."""
    for key in keys:
        prefix, _, name = key.rpartition("/")
        if key == opt_out or (prefix.startswith("gpuplan") and name.lower() in OPT_OUT_NAMES):
            return key
    return ""


def erases(workload: Workload) -> str:
    """What deleting a bare pod loses; empty for an owned workload (its owner restores)."""
    if workload.owner.kind != BARE_POD:
        return ""
    if any(p.empty_dir for p in workload.pods):
        return "the pod's emptyDir data (a bare pod: nothing brings it back)"
    return "the pod itself (a bare pod: nothing brings it back)"


def unit_fields(attributes: Mapping[str, str]) -> dict[str, object]:
    """A Kubernetes unit's workload fields for ``--json`` (namespace, owner, nodes, pods);
    empty for a cloud instance, whose records keep their shape."""
    if "owner_kind" not in attributes:
        return {}
    return {
        "namespace": attributes.get("namespace", ""),
        "owner_kind": attributes["owner_kind"],
        "owner_name": attributes.get("owner_name", ""),
        "nodes": [n for n in attributes.get("nodes", "").split(",") if n],
        "pods": [p for p in attributes.get("pods", "").split(",") if p],
    }
