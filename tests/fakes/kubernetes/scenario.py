"""Building fake clusters: nodes with real instance-type labels, owners and GPU pods, and
the dcgm-exporter / cAdvisor series each pod publishes."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from tests.fakes.kubernetes.prometheus import PodPrometheus
from tests.fakes.kubernetes.server import CORE, KubeApi

APPS, BATCH, POLICY, KUBEFLOW = (
    "apis/apps/v1",
    "apis/batch/v1",
    "apis/policy/v1",
    "apis/kubeflow.org/v1",
)
PLURAL = {
    "Deployment": (APPS, "deployments"),
    "StatefulSet": (APPS, "statefulsets"),
    "ReplicaSet": (APPS, "replicasets"),
    "DaemonSet": (APPS, "daemonsets"),
    "Job": (BATCH, "jobs"),
    "CronJob": (BATCH, "cronjobs"),
    "Notebook": (KUBEFLOW, "notebooks"),
}


def node(
    api: KubeApi,
    name: str,
    instance_type: str,
    region: str,
    gpus: int,
    *,
    spot: dict[str, str] | None = None,
    zone: str = "",
    labels: dict[str, str] | None = None,
    resource: str = "nvidia.com/gpu",
) -> None:
    all_labels = {
        "node.kubernetes.io/instance-type": instance_type,
        "topology.kubernetes.io/region": region,
        "topology.kubernetes.io/zone": zone or f"{region}a",
        **(spot or {}),
        **(labels or {}),
    }
    allocatable = {"cpu": "96", "memory": "1000Gi", resource: str(gpus)} if gpus else {"cpu": "8"}
    api.add(
        CORE,
        "nodes",
        {
            "metadata": {"name": name, "labels": all_labels},
            "status": {"allocatable": allocatable, "capacity": allocatable},
        },
    )


def owner(
    api: KubeApi,
    kind: str,
    ns: str,
    name: str,
    *,
    replicas: int | None = None,
    parent: tuple[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    prefix, plural = PLURAL[kind]
    meta: dict[str, Any] = {
        "name": name,
        "namespace": ns,
        "labels": labels or {},
        "annotations": annotations or {},
    }
    if parent is not None:
        meta["ownerReferences"] = [_ref(parent[0], parent[1], ns)]
    template = {
        "metadata": {"labels": {"app": name}},
        "spec": {"containers": [{"name": "main", "image": "x"}]},
    }
    spec: dict[str, Any] = {
        "Deployment": {"selector": {"matchLabels": {"app": name}}, "template": template},
        "StatefulSet": {
            "selector": {"matchLabels": {"app": name}},
            "template": template,
            "serviceName": name,
        },
        "ReplicaSet": {"selector": {"matchLabels": {"app": name}}, "template": template},
        "DaemonSet": {"selector": {"matchLabels": {"app": name}}, "template": template},
        "Job": {"template": template},
        "CronJob": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": template}}},
        "Notebook": {"template": {"spec": {"containers": [{"name": name, "image": "x"}]}}},
    }[kind]
    if replicas is not None:
        spec["replicas"] = replicas
    if kind in ("Job", "CronJob"):
        spec["suspend"] = False
    return api.add(prefix, plural, {"metadata": meta, "spec": spec})


def _ref(kind: str, name: str, ns: str) -> dict[str, Any]:
    prefix, plural = PLURAL[kind]
    api_version = prefix.removeprefix("apis/")
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "uid": f"uid-{plural}-{ns}-{name}",
        "controller": True,
    }


def pod(
    api: KubeApi,
    ns: str,
    name: str,
    node_name: str,
    gpus: int,
    *,
    owner: tuple[str, str] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    cpu: str = "4",
    empty_dir: bool = False,
    phase: str = "Running",
    resource: str = "nvidia.com/gpu",
) -> None:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": ns,
        "labels": labels or {},
        "annotations": annotations or {},
    }
    if owner is not None:
        meta["ownerReferences"] = [_ref(owner[0], owner[1], ns)]
    requests: dict[str, str] = {"cpu": cpu}
    if gpus:
        requests[resource] = str(gpus)
    spec: dict[str, Any] = {
        "nodeName": node_name,
        "containers": [
            {
                "name": "main",
                "image": "x",
                "resources": {"requests": requests, "limits": dict(requests)},
            }
        ],
    }
    if empty_dir:
        spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    api.add(
        CORE,
        "pods",
        {
            "metadata": meta,
            "spec": spec,
            "status": {"phase": phase, "startTime": "2026-12-01T08:00:00Z"},
        },
    )


def pdb(api: KubeApi, ns: str, name: str, match: dict[str, str], allowed: int) -> None:
    api.add(
        POLICY,
        "poddisruptionbudgets",
        {
            "metadata": {"name": name, "namespace": ns},
            "spec": {"selector": {"matchLabels": match}, "minAvailable": 1},
            "status": {
                "disruptionsAllowed": allowed,
                "currentHealthy": 1,
                "desiredHealthy": 1,
                "expectedPods": 1,
            },
        },
    )


@dataclass(frozen=True)
class Signals:
    util: float
    """GPU utilisation, percent."""
    memory_used_mib: float = 0.0
    cpu_cores: float = 0.1
    profiling: bool = False
    exported: bool = False
    """The ``exported_namespace``/``exported_pod`` layout."""


def publish(
    prom: PodPrometheus,
    ns: str,
    pod_name: str,
    gpus: int,
    signals: Signals,
    now: datetime,
    minutes: int = 300,
    node_name: str = "n",
) -> None:
    """Samples every minute for the last ``minutes``, one series per GPU."""
    if signals.exported:
        who = {
            "namespace": "gpu-operator",
            "pod": f"dcgm-exporter-{node_name}",
            "exported_namespace": ns,
            "exported_pod": pod_name,
        }
    else:
        who = {"namespace": ns, "pod": pod_name}
    total = 81920.0
    for i in range(minutes):
        at = now - timedelta(minutes=i)
        for gpu in range(gpus):
            base = {**who, "gpu": str(gpu), "Hostname": node_name, "container": "main"}
            if signals.profiling:
                prom.publish(
                    {"__name__": "DCGM_FI_PROF_GR_ENGINE_ACTIVE", **base}, at, signals.util / 100
                )
            prom.publish({"__name__": "DCGM_FI_DEV_GPU_UTIL", **base}, at, signals.util)
            prom.publish({"__name__": "DCGM_FI_DEV_FB_USED", **base}, at, signals.memory_used_mib)
            prom.publish(
                {"__name__": "DCGM_FI_DEV_FB_FREE", **base}, at, total - signals.memory_used_mib
            )
        seconds = signals.cpu_cores * 60 * (minutes - i)
        prom.publish(
            {
                "__name__": "container_cpu_usage_seconds_total",
                "namespace": ns,
                "pod": pod_name,
                "container": "main",
            },
            at,
            seconds,
        )
