"""The registry entry of Kubernetes GPU workloads: ``scope.kubernetes``, one adapter per
kubeconfig context (or the in-cluster service account).

Units are workloads (``namespace/Kind/name``), priced from the catalog by their nodes'
instance type, region and capacity type; utilisation per pod comes from the policy's
Prometheus (``idle.metrics.prometheus``: dcgm-exporter and cAdvisor). The policy's
``stop`` is each owner's own stop (scale to 0, suspend, the notebook stop annotation,
or deleting a bare pod when data loss is allowed). lightkube loads only in the builder
(``gpuplan[kubernetes]``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplan.core import clouds
from gpuplan.core.catalog.offers import Provider
from gpuplan.core.catalog.region_naming import RegionGroup
from gpuplan.core.errors import GpuplanError, InputError, ScopeInputError
from gpuplan.core.lifecycle.actions import Call, Refusal, one
from gpuplan.core.lifecycle.instances import Action
from gpuplan.core.policy.kubernetes_scope import KubernetesScope
from gpuplan.providers.base import CloudAdapter
from gpuplan.providers.cloud_entry import BuildContext, CloudEntry, ScopeAdapters, Service
from gpuplan.usecases.clouds.extras import needs_extra

KUBERNETES = Provider.named("kubernetes")


@dataclass(frozen=True)
class NodeRegions:
    """A node's region is its cloud's (``topology.kubernetes.io/region``), grouped as that
    cloud groups it: the first registered cloud gpuplan manages (not catalog-only) whose
    naming groups it, the built-in ones first. Kubernetes documents no region of its own
    (``known`` is empty), so a region name is never said to be Kubernetes' rather than
    its cloud's."""

    known: frozenset[str] = frozenset()

    def group(self, region: str) -> RegionGroup | None:
        for provider in clouds.registered():
            facts = clouds.facts_of(provider)
            if provider == KUBERNETES or facts.catalog_only:
                continue
            found = facts.regions.group(region)
            if found is not None:
                return found
        return None


NOT_A_NODE_ACTION = (
    "Kubernetes workloads are stopped through their owner; nodes are the autoscaler's"
)


def kube_scopes(context: BuildContext) -> dict[str, CloudAdapter]:
    """One adapter per context of ``scope.kubernetes`` (a context that cannot be read is a
    problem line; the others are surveyed)."""
    section = context.policy.scope.section(KUBERNETES)
    if not isinstance(section, KubernetesScope):
        raise InputError("the policy has no scope.kubernetes section")
    with needs_extra("scope.kubernetes"):
        import lightkube  # noqa: F401  # the extra's module, checked before any scope
    from gpuplan.providers.kubernetes.adapter import KubeAdapter
    from gpuplan.providers.kubernetes.client import make_client
    from gpuplan.providers.kubernetes.discovery import Reader
    from gpuplan.providers.kubernetes.pod_metrics import PodMetrics

    prometheus = context.policy.idle.metrics.prometheus
    metrics = (
        PodMetrics(str(prometheus.url), labels=section.metrics_labels)
        if prometheus is not None
        else None
    )
    if not section.in_cluster:
        check_kubeconfig(section)
    out = ScopeAdapters()
    names: list[str | None] = list(section.contexts) or [None]
    for name in names:
        try:
            client = make_client(section.kubeconfig, name, in_cluster=section.in_cluster)
        except GpuplanError as exc:
            out.problems.append(exc.message)
            continue
        shown = name or ("in-cluster" if section.in_cluster else client.config.context_name)
        reader = Reader(
            client,
            namespaces=section.namespaces,
            exclude=section.exclude_namespaces,
            match_labels=section.match_labels,
            page_size=section.page_size,
        )
        out[str(shown)] = KubeAdapter(
            KUBERNETES,
            str(shown),
            client,
            reader,
            catalog=context.catalog,
            metrics=metrics,
            protected=section.protected,
            opt_out=section.opt_out,
        )
    if not out and out.problems and len(names) == 1:
        raise InputError(out.problems[0])
    return out


def check_kubeconfig(section: KubernetesScope) -> None:
    """The kubeconfig ``scope.kubernetes`` names is read and holds each of its contexts
    (or a current context when none is named); else one line naming the file and field,
    exit 2, before any cluster is called."""
    from pathlib import Path

    from gpuplan.providers.kubernetes.client import default_kubeconfig, kubeconfig_contexts

    if section.kubeconfig:
        path, field = Path(section.kubeconfig).expanduser(), "scope.kubernetes.kubeconfig"
    else:
        path, field = default_kubeconfig(), "scope.kubernetes.kubeconfig (not set: the default)"
    try:
        known, current = kubeconfig_contexts(path)
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise ScopeInputError(f"{field}: {path}: cannot be read ({why})") from None
    except ValueError as exc:
        raise ScopeInputError(f"{field}: {path}: {exc}") from None
    has = ", ".join(known[:10]) or "none"
    for name in section.contexts:
        if name not in known:
            raise ScopeInputError(
                f"scope.kubernetes.contexts: {name!r} is not a context in {path} (it has: {has})"
            )
    if not section.contexts and current not in known:
        said = (
            f"current-context {current!r} is not one of its contexts"
            if current
            else ("it has no current-context")
        )
        raise ScopeInputError(
            f"scope.kubernetes.contexts: none named and {path}: {said} (it has: {has})"
        )


ENTRY = CloudEntry(
    KUBERNETES,
    kube_scopes,
    steps={
        Action.STOP: one(
            Call.STOP,
            "scale Deployment/StatefulSet to 0, suspend Job/CronJob, annotate Notebook "
            "kubeflow-resource-stopped, delete a bare pod (allow_data_loss)",
        ),
        # Only what gpuplan stopped: the replicas it recorded, the suspend, the annotation.
        Action.START: one(
            Call.START,
            "scale back to gpuplan.io/replicas-before, spec.suspend: false on Job/CronJob, "
            "remove the Notebook's kubeflow-resource-stopped",
        ),
        Action.HIBERNATE: Refusal(NOT_A_NODE_ACTION),
        Action.SUSPEND: Refusal("use stop: a Job or CronJob is suspended by stop"),
        Action.DEALLOCATE: Refusal(NOT_A_NODE_ACTION),
        # A workload's owner is never deleted: terminate reclaims the GPUs as stop does.
        Action.TERMINATE: one(Call.STOP, "as stop (gpuplan never deletes a workload's owner)"),
    },
    catalog_file="",
    permission_file="deploy/kubernetes-gpuplan-clusterrole.yaml",
    regions=NodeRegions(),
    services={Service.LISTING: "apiserver", Service.METRICS: "prometheus"},
    nothing_found="scope.kubernetes found no context: nothing was surveyed",
    local_storage="a bare pod's emptyDir volumes",
    scope_section=KubernetesScope,
    extra="kubernetes",
    sdk_modules=("lightkube",),
)
"""Kubernetes GPU workloads (docs/kubernetes.md)."""
