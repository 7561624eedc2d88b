"""One cluster read into core values: GPU nodes, GPU pods with their owners, budgets.

Every list is paged (``limit`` = the scope's page size, ``continue`` until the end).
A pod's owner is followed through ``ownerReferences`` (the controller reference):
Pod -> ReplicaSet -> Deployment; Pod -> StatefulSet -> Notebook (Kubeflow owns the
StatefulSet of a notebook); Pod -> Job -> CronJob; Pod -> DaemonSet; no owner: the bare
pod. Only pods bound to a node and not finished hold GPUs.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from typing import Any

from gpuplan.core.catalog.offers import Offer, PricingModel
from gpuplan.core.clouds import facts_of, registered
from gpuplan.core.lifecycle.idle import STOPPED_AT_TAG
from gpuplan.core.lifecycle.instances import InstanceState
from gpuplan.core.lifecycle.workloads import Budget, GpuNode, GpuPod, Owner
from gpuplan.providers.kubernetes.client import call

GPU_RESOURCES = ("nvidia.com/gpu", "amd.com/gpu")
MIG_PREFIX = "nvidia.com/mig-"
STOP_ANNOTATION = "kubeflow-resource-stopped"
REPLICAS_ANNOTATION = "gpuplan.io/replicas-before"
"""The replica count gpuplan wrote on an owner it scaled to 0 (restore scales back to it)."""
STOP_MARKS = (REPLICAS_ANNOTATION, STOPPED_AT_TAG)
"""Annotations only gpuplan writes when it stops an owner: an owner stopped and carrying
one is listed with no pods (a schedule starts it again); one a person stopped is not."""
SPOT_LABELS: dict[str, tuple[str, ...]] = {"karpenter.sh/capacity-type": ("spot",)}
"""Node labels that mark a spot node on any cloud (Karpenter); each registered cloud adds
its managed Kubernetes' own (:func:`spot_labels`)."""


def spot_labels() -> dict[str, tuple[str, ...]]:
    """Every spot-node label: Karpenter's, then each registered cloud's."""
    found = dict(SPOT_LABELS)
    for provider in registered():
        found.update(facts_of(provider).spot_node_labels)
    return found


TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")
ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")


@dataclass(frozen=True)
class OwnerState:
    """The managed object behind a workload: its annotations, labels and state."""

    annotations: Mapping[str, str]
    labels: Mapping[str, str]
    state: InstanceState
    replicas: int | None = None
    resource_version: str = ""


@dataclass
class Snapshot:
    """What one survey of a cluster found."""

    nodes: dict[str, GpuNode] = field(default_factory=dict)
    pods: list[GpuPod] = field(default_factory=list)
    budgets: list[Budget] = field(default_factory=list)
    owners: dict[str, OwnerState] = field(default_factory=dict)
    """``namespace/Kind/name`` -> the owner's state (Deployment, Job, Notebook ...)."""
    stopped: dict[str, OwnerState] = field(default_factory=dict)
    """Owners gpuplan stopped (:data:`STOP_MARKS`) that hold no GPU pod now, by key."""
    notes: list[str] = field(default_factory=list)


def notebook_resource() -> Any:
    from lightkube.generic_resource import create_namespaced_resource

    return create_namespaced_resource("kubeflow.org", "v1", "Notebook", "notebooks")


def quantity(raw: Any) -> float:
    """A Kubernetes quantity (``2``, ``500m``, ``1.5``) as a number; 0 when unreadable."""
    text = str(raw or "0").strip()
    try:
        if text.endswith("m"):
            return float(text[:-1]) / 1000
        value = float(text)
    except ValueError:
        return 0.0
    return value if value == value and abs(value) < 1e9 else 0.0


@dataclass
class Reader:
    """Reads one cluster through a lightkube client, page by page."""

    client: Any
    namespaces: Sequence[str] = ()
    exclude: Sequence[str] = ()
    match_labels: Mapping[str, str] = field(default_factory=dict)
    page_size: int = 500

    def listed(self, resource: Any, *, labels: Mapping[str, str] | None = None) -> list[Any]:
        """Every object of ``resource`` in scope (per namespace when namespaces are set)."""
        from lightkube import ALL_NS

        name = resource._api_info.plural
        spaces = list(self.namespaces) or [ALL_NS]
        if _cluster_wide(resource):
            spaces = [""]
        out: list[Any] = []
        for ns in spaces:
            kwargs: dict[str, Any] = {"chunk_size": self.page_size}
            if ns:
                kwargs["namespace"] = ns
            if labels:
                kwargs["labels"] = dict(labels)
            found: list[Any] = call(f"list {name}", functools.partial(self._all, resource, kwargs))
            out.extend(o for o in found if _namespace(o) not in self.exclude)
        return out

    def _all(self, resource: Any, kwargs: dict[str, Any]) -> list[Any]:
        return list(self.client.list(resource, **kwargs))

    def snapshot(self, offers: Iterable[Offer]) -> Snapshot:
        from lightkube.resources.apps_v1 import Deployment, ReplicaSet, StatefulSet
        from lightkube.resources.batch_v1 import CronJob, Job
        from lightkube.resources.core_v1 import Node, Pod
        from lightkube.resources.policy_v1 import PodDisruptionBudget

        prices = _price_index(offers)
        snap = Snapshot()
        for node in self.listed(Node):
            gpu_node = to_node(node, prices)
            if gpu_node is not None:
                snap.nodes[gpu_node.name] = gpu_node
        pods = [p for p in self.listed(Pod, labels=self.match_labels) if pod_gpus(p) > 0]
        replica_sets = {_key(o): _controller(o) for o in self.listed(ReplicaSet)}
        sets = {_key(o): _controller(o) for o in self.listed(StatefulSet)}
        jobs = {_key(o): _controller(o) for o in self.listed(Job)}
        chains = {"ReplicaSet": replica_sets, "StatefulSet": sets, "Job": jobs}
        for pod in pods:
            snap.pods.append(to_pod(pod, owner_of(pod, chains)))
        self._owners(snap, [Deployment, StatefulSet, ReplicaSet, Job, CronJob])
        self._notebooks(snap)
        if pods:
            snap.budgets = [to_budget(b) for b in self.listed(PodDisruptionBudget)]
        return snap

    def _owners(self, snap: Snapshot, resources: Sequence[Any]) -> None:
        wanted = {f"{p.namespace}/{p.owner.kind}/{p.owner.name}" for p in snap.pods}
        for resource in resources:
            kind = resource.__name__
            for obj in self.listed(resource):
                key = f"{_namespace(obj)}/{kind}/{obj.metadata.name}"
                self._keep(snap, key, owner_state(kind, obj), wanted, _template_labels(obj))

    def _keep(
        self,
        snap: Snapshot,
        key: str,
        state: OwnerState,
        wanted: set[str],
        template: Mapping[str, str],
    ) -> None:
        """An owner of a GPU pod, or one gpuplan stopped (in the scope's labels)."""
        if key in wanted:
            snap.owners[key] = state
        elif (
            state.state is not InstanceState.RUNNING
            and any(m in state.annotations for m in STOP_MARKS)
            and all(template.get(k) == v for k, v in self.match_labels.items())
        ):
            # its pods' labels (the schedule tag ...) outlive the pods in the template
            snap.stopped[key] = replace(state, labels={**template, **state.labels})

    def _notebooks(self, snap: Snapshot) -> None:
        from gpuplan.providers.base import ProviderError

        wanted = {f"{p.namespace}/{p.owner.kind}/{p.owner.name}" for p in snap.pods}
        try:
            found = self.listed(notebook_resource())
        except ProviderError as exc:
            # no Kubeflow (404) matters only when a pod names a notebook as its owner
            if "Notebook" in {w.split("/")[1] for w in wanted} or "HTTP 404" not in exc.message:
                snap.notes.append(f"notebooks not read: {exc.message}")
            return
        for obj in found:
            key = f"{_namespace(obj)}/Notebook/{obj.metadata.name}"
            self._keep(snap, key, owner_state("Notebook", obj), wanted, _template_labels(obj))


def _template_labels(obj: Any) -> dict[str, str]:
    """The labels its pods would carry (the pod template's), with the owner's own."""
    spec = obj.spec
    if isinstance(spec, dict):  # a custom resource (Notebook)
        template = spec.get("template") or {}
        meta = template.get("metadata") or {} if isinstance(template, dict) else {}
        found = meta.get("labels") or {} if isinstance(meta, dict) else {}
    else:
        template = getattr(spec, "template", None)
        jobs = getattr(spec, "jobTemplate", None)
        if template is None and jobs is not None and jobs.spec is not None:
            template = jobs.spec.template
        meta = template.metadata if template is not None else None
        found = (meta.labels if meta is not None else None) or {}
    labels = {str(k): str(v) for k, v in dict(found).items()}
    return {**dict(obj.metadata.labels or {}), **labels}


def _cluster_wide(resource: Any) -> bool:
    return resource.__name__ in ("Node", "Namespace")


def _namespace(obj: Any) -> str:
    return str(obj.metadata.namespace or "")


def _key(obj: Any) -> tuple[str, str]:
    return _namespace(obj), str(obj.metadata.name)


def _controller(obj: Any) -> Owner | None:
    refs = obj.metadata.ownerReferences or []
    chosen = next((r for r in refs if r.controller), refs[0] if refs else None)
    return Owner(str(chosen.kind), str(chosen.name)) if chosen is not None else None


def owner_of(pod: Any, chains: Mapping[str, Mapping[tuple[str, str], Owner | None]]) -> Owner:
    """What a person manages for ``pod``: up to two hops of ``ownerReferences``."""
    first = _controller(pod)
    if first is None:
        return Owner("Pod", str(pod.metadata.name))
    parent = chains.get(first.kind, {}).get((_namespace(pod), first.name))
    if first.kind in chains and parent is not None:
        return parent
    return first


def pod_gpus(pod: Any) -> int:
    """GPUs a live pod holds: requests (else limits) of GPU resources and MIG slices."""
    phase = pod.status.phase if pod.status is not None else None
    if phase in ("Succeeded", "Failed") or not (pod.spec and pod.spec.nodeName):
        return 0
    total = 0.0
    for container in pod.spec.containers or []:
        res = container.resources
        if res is None:
            continue
        asked = dict(res.requests or {})
        if not any(_is_gpu(k) for k in asked):
            asked = dict(res.limits or {})  # a GPU limit alone sets the request
        total += sum(quantity(v) for k, v in asked.items() if _is_gpu(k))
    return int(total)


def _is_gpu(resource: str) -> bool:
    return resource in GPU_RESOURCES or resource.startswith(MIG_PREFIX)


def to_pod(pod: Any, owner: Owner) -> GpuPod:
    meta, spec = pod.metadata, pod.spec
    cpu = 0.0
    for container in spec.containers or []:
        res = container.resources
        if res is not None:
            cpu += quantity((res.requests or {}).get("cpu") or (res.limits or {}).get("cpu"))
    started = pod.status.startTime if pod.status is not None else None
    return GpuPod(
        namespace=_namespace(pod),
        name=str(meta.name),
        node=str(spec.nodeName),
        gpus=pod_gpus(pod),
        owner=owner,
        labels=dict(meta.labels or {}),
        annotations=dict(meta.annotations or {}),
        started_at=started if isinstance(started, datetime) else None,
        cpu_cores=cpu or None,
        empty_dir=any(v.emptyDir is not None for v in spec.volumes or []),
    )


def to_node(node: Any, prices: Mapping[tuple[str, str], Offer]) -> GpuNode | None:
    """The node as a :class:`GpuNode`, or None when it has no allocatable GPU."""
    allocatable = (node.status.allocatable if node.status is not None else None) or {}
    whole = sum(int(quantity(allocatable.get(r))) for r in GPU_RESOURCES)
    mig = sum(int(quantity(v)) for k, v in allocatable.items() if k.startswith(MIG_PREFIX))
    if whole + mig <= 0:
        return None
    labels = dict(node.metadata.labels or {})
    kind = _first(labels, TYPE_LABELS)
    region = _first(labels, REGION_LABELS)
    spot = any(labels.get(k) in v for k, v in spot_labels().items())
    pricing = PricingModel.SPOT if spot else PricingModel.ON_DEMAND
    offer = prices.get((kind.lower(), region))
    price: Decimal | None = offer.price(pricing) if offer is not None else None
    return GpuNode(
        name=str(node.metadata.name),
        instance_type=kind or "unknown",
        region=region or "unknown",
        zone=_first(labels, ZONE_LABELS) or None,
        pricing=pricing,
        gpus=whole + mig,
        sharing=_sharing(labels, mig),
        hourly_usd=price,
    )


def _sharing(labels: Mapping[str, str], mig: int) -> str:
    if mig:
        return "MIG slices"
    replicas = int(quantity(labels.get("nvidia.com/gpu.replicas", "1")))
    if replicas > 1:
        return f"time-slicing ({replicas} replicas per GPU)"
    strategy = labels.get("nvidia.com/gpu.sharing-strategy", "none")
    return "" if strategy in ("none", "") else f"GPU sharing ({strategy})"


def _first(labels: Mapping[str, str], keys: Sequence[str]) -> str:
    return next((labels[k] for k in keys if labels.get(k)), "")


def _price_index(offers: Iterable[Offer]) -> dict[tuple[str, str], Offer]:
    index: dict[tuple[str, str], Offer] = {}
    for offer in offers:
        index.setdefault((offer.instance_type.lower(), offer.region), offer)
    return index


def owner_state(kind: str, obj: Any) -> OwnerState:
    """The state of a managed object: stopped when scaled to 0, suspended, or annotated."""
    meta = obj.metadata
    annotations = dict(meta.annotations or {})
    spec = obj.spec if not isinstance(obj.spec, dict) else None
    state, replicas = InstanceState.RUNNING, None
    if kind in ("Deployment", "StatefulSet", "ReplicaSet"):
        replicas = spec.replicas if spec is not None and spec.replicas is not None else 1
        state = InstanceState.STOPPED if replicas == 0 else state
    elif kind in ("Job", "CronJob"):
        state = InstanceState.SUSPENDED if spec is not None and spec.suspend else state
    elif kind == "Notebook" and STOP_ANNOTATION in annotations:
        state = InstanceState.STOPPED
    return OwnerState(
        annotations, dict(meta.labels or {}), state, replicas, str(meta.resourceVersion or "")
    )


def to_budget(pdb: Any) -> Budget:
    selector = pdb.spec.selector if pdb.spec is not None else None
    exprs = tuple(
        (str(e.key), str(e.operator), tuple(e.values or ()))
        for e in ((selector.matchExpressions or []) if selector else [])
    )
    allowed = pdb.status.disruptionsAllowed if pdb.status is not None else 0
    minimum = pdb.spec.minAvailable if pdb.spec is not None else None
    return Budget(
        name=str(pdb.metadata.name),
        namespace=_namespace(pdb),
        match_labels=dict((selector.matchLabels or {}) if selector else {}),
        expressions=exprs,
        disruptions_allowed=int(allowed or 0),
        min_available=None if minimum is None else str(minimum),
    )
