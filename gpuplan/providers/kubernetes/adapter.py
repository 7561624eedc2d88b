"""One cluster context as a :class:`~gpuplan.providers.base.CloudAdapter` of GPU workloads.

Each unit is a workload (``namespace/Kind/name``): its pods' GPUs, their share of their
nodes' prices, the owner's state. ``stop`` is the owner's own way to stop
(:mod:`.reclaim`); tags are annotations on the owner, so notices, snoozes and leases work
as on instances. The refusals (DaemonSet, protected namespace, opt-out, a disruption
budget) and what deleting a bare pod erases travel in the unit's risk facts, so the
planner skips them with the reason. :meth:`KubeAdapter.preview` runs an action with
``dryRun=All`` (the API server checks it, nothing changes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from gpuplan.core.catalog.offers import PricingModel, Provider
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.lifecycle.instances import (
    Action,
    Capability,
    GpuInstance,
    HostSamples,
    InstanceState,
    RiskFacts,
)
from gpuplan.core.lifecycle.workloads import (
    GpuNode,
    Stranded,
    Workload,
    erases,
    group,
    opted_out,
    refusal,
    stranded,
    workload_hourly,
)
from gpuplan.core.lifecycle.workloads import (
    Owner as WorkloadOwner,
)
from gpuplan.providers.base import ProviderError, unsupported
from gpuplan.providers.kubernetes import reclaim
from gpuplan.providers.kubernetes.discovery import (
    REPLICAS_ANNOTATION,
    OwnerState,
    Reader,
    Snapshot,
    owner_state,
)
from gpuplan.providers.kubernetes.pod_metrics import PodMetrics, PodRef

NAMESPACE_LABEL = "gpuplan.io/namespace"
OWNER_LABEL = "gpuplan.io/owner"
"""Labels every unit carries, so reports group by namespace and owner (``--by owner``)."""
KEPT_PREFIX = "gpuplan-"
"""Owner and pod annotations with this prefix are the unit's tags (notice, snooze, lease)."""


def undo_of(workload: Workload, replicas: int | None) -> str:
    key = workload.key
    kind = workload.owner.kind
    if kind in reclaim.SCALED:
        return f"gpuplan restore {key} (back to {replicas} replicas)"
    if kind in reclaim.SUSPENDED:
        return f"gpuplan restore {key} (spec.suspend: false)"
    if kind == "Notebook":
        return f"gpuplan restore {key} (removes kubeflow-resource-stopped)"
    return ""


@dataclass(eq=False)  # identity: the executor groups units by their adapter
class KubeAdapter:
    """GPU workloads of one cluster context."""

    provider: Provider
    context: str
    client: Any
    reader: Reader
    catalog: Catalog | None = None
    metrics: PodMetrics | None = None
    protected: Sequence[str] = ("kube-system",)
    opt_out: str = "gpuplan.io/opt-out"
    clock: Any = None
    last: Snapshot = field(default_factory=Snapshot)
    _notices: list[str] = field(default_factory=list)

    @property
    def scope(self) -> str:
        return f"kubernetes {self.context}"

    @property
    def start_states(self) -> frozenset[InstanceState]:
        """States a start brings back: scaled to 0 or annotated (stopped), and a
        suspended Job or CronJob (its start is ``spec.suspend: false``)."""
        return frozenset({InstanceState.STOPPED, InstanceState.SUSPENDED})

    @property
    def capabilities(self) -> frozenset[Capability]:
        # terminate reclaims as stop does (the entry's row): a workload's owner is kept
        caps = {
            Capability.LIST,
            Capability.STOP,
            Capability.TERMINATE,
            Capability.TAG,
            Capability.START,  # undoes gpuplan's own stop (:func:`reclaim.restore`)
        }
        if self.metrics is not None:
            caps.add(Capability.METRICS)
        return frozenset(caps)

    def drain_notices(self) -> list[str]:
        out, self._notices = self._notices, []
        return out

    # --- listing ----------------------------------------------------------------------

    def list_instances(self) -> list[GpuInstance]:
        offers = self.catalog.offers if self.catalog is not None else ()
        self.last = snap = self.reader.snapshot(offers)
        self._notices.extend(f"{self.scope}: {n}" for n in snap.notes)
        for node in snap.nodes.values():
            if node.sharing:
                self._notices.append(
                    f"{self.scope}: node {node.name} shares GPUs ({node.sharing}): "
                    "its pods are reported, not priced"
                )
            elif node.hourly_usd is None:
                self._notices.append(
                    f"{self.scope}: node {node.name} ({node.instance_type}, {node.region}, "
                    f"{node.pricing.value}): no catalog price"
                )
        for spare in self.stranded():
            self._notices.append(f"{self.scope}: {stranded_line(spare)}")
        units = [self._unit(w) for w in group(snap.pods)]
        return units + [self._stopped_unit(k, o) for k, o in sorted(snap.stopped.items())]

    def stranded(self) -> list[Stranded]:
        return stranded(self.last.nodes.values(), self.last.pods)

    def stranded_records(self) -> list[dict[str, object]]:
        """The last listing's stranded GPUs, one record per node (``fleet --json``)."""
        return [
            {
                "scope": self.scope,
                "node": x.node.name,
                "instance_type": x.node.instance_type,
                "region": x.node.region,
                "pricing": x.node.pricing.value,
                "gpus": x.gpus,
                "node_gpus": x.node.gpus,
                "hourly_usd": x.hourly_usd,
            }
            for x in self.stranded()
        ]

    def _unit(self, workload: Workload) -> GpuInstance:
        snap = self.last
        owner = snap.owners.get(workload.key)
        nodes = [snap.nodes[p.node] for p in workload.pods if p.node in snap.nodes]
        first = workload.pods[0]
        labels = dict(first.labels)
        kept = {**first.annotations, **(owner.annotations if owner else {})}
        labels.update({k: v for k, v in kept.items() if k.startswith(KEPT_PREFIX)})
        labels.update(
            {
                NAMESPACE_LABEL: workload.namespace,
                OWNER_LABEL: f"{workload.owner.kind}/{workload.owner.name}",
            }
        )
        types = sorted({n.instance_type for n in nodes}) or ["unknown"]
        starts = [p.started_at for p in workload.pods if p.started_at is not None]
        why = refusal(
            workload, protected=self.protected, opt_out=self.opt_out, budgets=snap.budgets
        )
        marked = opted_out([*owner.labels, *owner.annotations], self.opt_out) if owner else ""
        if not why and marked:
            why = f"opted out: {workload.owner.kind} {workload.owner.name} carries {marked}"
        if not why and workload.owner.kind not in (
            *reclaim.SCALED,
            *reclaim.SUSPENDED,
            "Notebook",
            "Pod",
        ):
            why = f"owner kind {workload.owner.kind}: gpuplan does not act on it"
        return GpuInstance(
            provider=self.provider,
            account=self.context,
            region=nodes[0].region if nodes else "unknown",
            zone=nodes[0].zone if nodes else None,
            instance_id=workload.key,
            name=workload.owner.name,
            instance_type=", ".join(types),
            state=owner.state if owner is not None else InstanceState.RUNNING,
            started_at=min(starts) if starts else None,
            labels=labels,
            pricing=_pricing(nodes),
            gpu=self._gpu_name(nodes),
            gpu_count=workload.gpus,
            hourly_usd=workload_hourly(workload, snap.nodes),
            risk=RiskFacts(
                erases=erases(workload),
                refused=why,
                undo=undo_of(workload, owner.replicas if owner else None),
            ),
            attributes={
                "namespace": workload.namespace,
                "owner_kind": workload.owner.kind,
                "owner_name": workload.owner.name,
                "nodes": ",".join(sorted({p.node for p in workload.pods})),
                "pods": ",".join(p.name for p in workload.pods),
            },
        )

    def _stopped_unit(self, key: str, owner: OwnerState) -> GpuInstance:
        """An owner gpuplan stopped that holds no pod now: listed so that a schedule can
        start it again; no node, so no price (unknown, never zero)."""
        ns, kind, name = split_key(key)
        workload = Workload(ns, WorkloadOwner(kind, name), ())
        labels = dict(owner.labels)
        labels.update({k: v for k, v in owner.annotations.items() if k.startswith(KEPT_PREFIX)})
        labels.update({NAMESPACE_LABEL: ns, OWNER_LABEL: f"{kind}/{name}"})
        why = refusal(workload, protected=self.protected, opt_out=self.opt_out, budgets=())
        marked = opted_out([*owner.labels, *owner.annotations], self.opt_out)
        if not why and marked:
            why = f"opted out: {kind} {name} carries {marked}"
        recorded = owner.annotations.get(REPLICAS_ANNOTATION, "")
        replicas = int(recorded) if recorded.isdigit() and int(recorded) <= 10_000 else None
        return GpuInstance(
            provider=self.provider,
            account=self.context,
            region="unknown",
            instance_id=key,
            name=name,
            instance_type="unknown",
            state=owner.state,
            labels=labels,
            risk=RiskFacts(refused=why, undo=undo_of(workload, replicas)),
            attributes={
                "namespace": ns,
                "owner_kind": kind,
                "owner_name": name,
                "nodes": "",
                "pods": "",
            },
        )

    def _gpu_name(self, nodes: Sequence[GpuNode]) -> str | None:
        if self.catalog is None or not nodes:
            return None
        wanted = (nodes[0].instance_type.lower(), nodes[0].region)
        for offer in self.catalog.offers:
            if (offer.instance_type.lower(), offer.region) == wanted:
                return offer.gpu
        return None

    # --- metrics ----------------------------------------------------------------------

    def fetch_utilisation(
        self,
        instances: Sequence[GpuInstance],
        *,
        start: datetime,
        end: datetime,
        period_minutes: int,
    ) -> dict[str, HostSamples]:
        if self.metrics is None:
            return {}
        cores = {(p.namespace, p.name): p.cpu_cores for p in self.last.pods}
        units = {
            inst.instance_id: [
                PodRef(
                    inst.attributes["namespace"],
                    pod,
                    cores.get((inst.attributes["namespace"], pod)),
                )
                for pod in inst.attributes.get("pods", "").split(",")
                if pod
            ]
            for inst in instances
            if "namespace" in inst.attributes
        }
        return self.metrics.workload_samples(
            units, start=start, end=end, period_minutes=period_minutes
        )

    # --- acting -----------------------------------------------------------------------

    def _where(self, inst: GpuInstance) -> tuple[str, str, str]:
        a = inst.attributes
        return a["namespace"], a["owner_kind"], a["owner_name"]

    def refresh(self, instance: GpuInstance) -> GpuInstance:
        ns, kind, name = self._where(instance)
        from gpuplan.providers.kubernetes.client import call

        res = reclaim.resource_of(kind)
        obj = call(f"read {kind} {ns}/{name}", lambda: self.client.get(res, name, namespace=ns))
        if kind == "Pod":
            annotations = dict(obj.metadata.annotations or {})
            state = InstanceState.RUNNING
        else:
            found = owner_state(kind, obj)
            annotations, state = dict(found.annotations), found.state
        labels = {k: v for k, v in instance.labels.items() if not k.startswith(KEPT_PREFIX)}
        labels.update({k: v for k, v in annotations.items() if k.startswith(KEPT_PREFIX)})
        return instance.model_copy(update={"labels": labels, "state": state})

    def act(self, instance: GpuInstance, action: Action) -> InstanceState:
        if action not in (Action.STOP, Action.TERMINATE, Action.START):
            raise unsupported(self.scope, action)
        if instance.risk.refused:
            raise ProviderError(f"{instance.instance_id}: refused: {instance.risk.refused}")
        ns, kind, name = self._where(instance)
        if action is Action.START:
            reclaim.restore(self.client, ns, kind, name)
            return InstanceState.RUNNING
        reclaim.reclaim(self.client, ns, kind, name, self._now())
        return InstanceState.SUSPENDED if kind in reclaim.SUSPENDED else InstanceState.STOPPED

    def preview(self, instance: GpuInstance, action: Action) -> str:
        """The action sent with ``dryRun=All``: what the API server would do."""
        if action not in (Action.STOP, Action.TERMINATE, Action.START):
            raise unsupported(self.scope, action)
        ns, kind, name = self._where(instance)
        if action is Action.START:
            done = reclaim.restore(self.client, ns, kind, name, dry_run=True)
        else:
            done = reclaim.reclaim(self.client, ns, kind, name, self._now(), dry_run=True)
        return f"dry run accepted by the API server (dryRun=All): would have {done}"

    def restore(self, instance_id: str, *, dry_run: bool = False) -> str:
        ns, kind, name = split_key(instance_id)
        return reclaim.restore(self.client, ns, kind, name, dry_run=dry_run)

    def tag(self, instance: GpuInstance, tags: Mapping[str, str]) -> None:
        if tags:
            ns, kind, name = self._where(instance)
            reclaim.annotate(self.client, ns, kind, name, dict(tags))

    def untag(self, instance: GpuInstance, keys: Sequence[str]) -> None:
        if keys:
            ns, kind, name = self._where(instance)
            reclaim.annotate(self.client, ns, kind, name, dict.fromkeys(keys))

    def _now(self) -> datetime:
        return self.clock() if self.clock is not None else datetime.now(UTC)


def split_key(key: str) -> tuple[str, str, str]:
    """``namespace/Kind/name`` -> its parts; ProviderError when it is not one."""
    parts = key.split("/")
    if len(parts) != 3 or not all(parts):
        raise ProviderError(f"{key[:100]}: not a workload id (namespace/Kind/name)")
    return parts[0], parts[1], parts[2]


def _pricing(nodes: Sequence[GpuNode]) -> PricingModel:
    spot = nodes and all(n.pricing is PricingModel.SPOT for n in nodes)
    return PricingModel.SPOT if spot else PricingModel.ON_DEMAND


def stranded_line(spare: Stranded) -> str:
    node = spare.node
    price = f"${spare.hourly_usd:.2f}/h" if spare.hourly_usd is not None else "price unknown"
    return (
        f"node {node.name} ({node.instance_type}, {node.region}, {node.pricing.value}): "
        f"{spare.gpus} of {node.gpus} GPUs stranded (requested by no pod), {price}"
    )
