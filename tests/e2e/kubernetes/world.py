"""The cluster scenario of the Kubernetes end-to-end tests: several namespaces, on-demand
and spot GPU nodes of real instance types, every kind of owner, and their metrics.

``EXPECTED`` is the verdict and the action of each workload once ``stop-idle --apply``
has run with :func:`policy_text`'s policy (``allow_data_loss: false``).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from tests.fakes.kubernetes import scenario as s
from tests.fakes.kubernetes.prometheus import PodPrometheus
from tests.fakes.kubernetes.scenario import Signals
from tests.fakes.kubernetes.server import KubeApi

SPOT_KARPENTER = {"karpenter.sh/capacity-type": "spot"}
SPOT_GKE = {"cloud.google.com/gke-spot": "true"}
ON_DEMAND_EKS = {"eks.amazonaws.com/capacityType": "ON_DEMAND"}
IDLE = Signals(util=0.0, memory_used_mib=0.0, cpu_cores=0.01)

# workload id -> (verdict, action in stop-idle --json, skip reason or None)
EXPECTED = {
    "research/Notebook/idle-nb": ("idle", "stopped", None),
    "research/Notebook/busy-nb": ("busy", "none", None),
    "research/Notebook/holding-nb": ("busy", "none", None),
    "ml-eval/Deployment/eval-server": ("idle", "stopped", None),
    "batch/Job/preprocess": ("busy", "none", None),
    "batch/CronJob/nightly": ("idle", "stopped", None),  # stop = suspend here
    "kube-system/Pod/gpu-check": ("idle", "skipped", "refused"),
    "monitoring/DaemonSet/gpu-agent": ("idle", "skipped", "refused"),
    "team-b/Deployment/api-gpu": ("idle", "skipped", "refused"),
    "team-b/Deployment/keep-me": ("idle", "skipped", "refused"),
    "team-b/StatefulSet/no-metrics": ("unknown", "none", None),
    "research/Pod/scratch": ("idle", "skipped", "data loss"),
}
ACTED = {
    "research/Notebook/idle-nb": ("apis/kubeflow.org/v1", "notebooks"),
    "ml-eval/Deployment/eval-server": ("apis/apps/v1", "deployments"),
    "batch/CronJob/nightly": ("apis/batch/v1", "cronjobs"),
}
# pod -> (namespace, node, GPUs)
PODS = {
    "idle-nb-0": ("research", "p4d-a", 1),
    "busy-nb-0": ("research", "p4d-a", 1),
    "holding-nb-0": ("research", "p4d-a", 1),
    "eval-server-7c9-a": ("ml-eval", "p4d-a", 1),
    "eval-server-7c9-b": ("ml-eval", "p4d-a", 1),
    "preprocess-x1": ("batch", "p4d-a", 1),
    "api-gpu-5d-a": ("team-b", "p4d-a", 1),
    "keep-me-6f-a": ("team-b", "p4d-spot", 1),
    "no-metrics-0": ("team-b", "p4d-spot", 1),
    "scratch": ("research", "p4d-spot", 1),
    "nightly-2912-q": ("batch", "g5-spot", 1),
    "gpu-check": ("kube-system", "a2-spot", 1),
    "gpu-agent-z": ("monitoring", "a2-od", 1),
}
NODES = {
    # name -> (instance type, region, GPUs, capacity labels)
    "p4d-a": ("p4d.24xlarge", "us-east-1", 8, ON_DEMAND_EKS),
    "p4d-spot": ("p4d.24xlarge", "us-east-1", 8, SPOT_KARPENTER),
    "g5-spot": ("g5.xlarge", "us-east-1", 1, SPOT_KARPENTER),
    "g5-idle-node": ("g5.xlarge", "us-east-1", 1, ON_DEMAND_EKS),
    "a2-spot": ("a2-highgpu-1g", "us-central1", 1, SPOT_GKE),
    "a2-od": ("a2-highgpu-1g", "us-central1", 1, {}),
}


def build(api: KubeApi) -> None:
    for name, (kind, region, gpus, labels) in NODES.items():
        s.node(api, name, kind, region, gpus, spot=labels)
    s.node(api, "cpu-only", "m5.large", "us-east-1", 0)
    for nb in ("idle-nb", "busy-nb", "holding-nb"):
        s.owner(api, "Notebook", "research", nb)
        s.owner(api, "StatefulSet", "research", nb, replicas=1, parent=("Notebook", nb))
        s.pod(
            api,
            "research",
            f"{nb}-0",
            "p4d-a",
            1,
            owner=("StatefulSet", nb),
            labels={"team": "research", "notebook-name": nb},
        )
    s.owner(api, "Deployment", "ml-eval", "eval-server", replicas=2)
    s.owner(
        api,
        "ReplicaSet",
        "ml-eval",
        "eval-server-7c9",
        replicas=2,
        parent=("Deployment", "eval-server"),
    )
    for suffix in ("a", "b"):
        s.pod(
            api,
            "ml-eval",
            f"eval-server-7c9-{suffix}",
            "p4d-a",
            1,
            owner=("ReplicaSet", "eval-server-7c9"),
            labels={"team": "eval", "app": "eval"},
        )
    s.owner(api, "Job", "batch", "preprocess")
    s.pod(
        api,
        "batch",
        "preprocess-x1",
        "p4d-a",
        1,
        owner=("Job", "preprocess"),
        cpu="4",
        labels={"team": "data"},
    )
    s.owner(api, "CronJob", "batch", "nightly")
    s.owner(api, "Job", "batch", "nightly-2912", parent=("CronJob", "nightly"))
    s.pod(
        api,
        "batch",
        "nightly-2912-q",
        "g5-spot",
        1,
        owner=("Job", "nightly-2912"),
        labels={"team": "data"},
    )
    s.pod(api, "kube-system", "gpu-check", "a2-spot", 1)
    s.owner(api, "DaemonSet", "monitoring", "gpu-agent")
    s.pod(api, "monitoring", "gpu-agent-z", "a2-od", 1, owner=("DaemonSet", "gpu-agent"))
    s.owner(api, "DaemonSet", "gpu-operator", "dcgm-exporter")
    s.pod(api, "gpu-operator", "dcgm-exporter-1", "p4d-a", 0, owner=("DaemonSet", "dcgm-exporter"))
    for name, labels in (
        ("api-gpu", {"app": "api-gpu"}),
        ("keep-me", {"app": "keep", "gpuplan.io/opt-out": "true"}),
    ):
        s.owner(api, "Deployment", "team-b", name, replicas=1)
        s.owner(api, "ReplicaSet", "team-b", f"{name}-rs", replicas=1, parent=("Deployment", name))
        pod = next(p for p in PODS if p.startswith(name))
        s.pod(
            api,
            "team-b",
            pod,
            PODS[pod][1],
            1,
            owner=("ReplicaSet", f"{name}-rs"),
            labels={"team": "b", **labels},
        )
    s.pdb(api, "team-b", "api-gpu-pdb", {"app": "api-gpu"}, allowed=0)
    s.owner(api, "StatefulSet", "team-b", "no-metrics", replicas=1)
    s.pod(api, "team-b", "no-metrics-0", "p4d-spot", 1, owner=("StatefulSet", "no-metrics"))
    s.pod(api, "research", "scratch", "p4d-spot", 1, empty_dir=True, labels={"team": "research"})


def metrics(prom: PodPrometheus, now: datetime) -> None:
    signals = {
        "busy-nb-0": Signals(util=70.0, memory_used_mib=20000, cpu_cores=1.0),
        "holding-nb-0": Signals(util=0.0, memory_used_mib=30000, cpu_cores=0.02),
        "preprocess-x1": Signals(util=0.0, memory_used_mib=0.0, cpu_cores=3.8),
        # the exported_* layout, and the profiling metric, for one replica each
        "eval-server-7c9-a": Signals(util=0.0, exported=True),
        "eval-server-7c9-b": Signals(util=0.0, profiling=True),
    }
    for pod, (ns, node, gpus) in PODS.items():
        if pod == "no-metrics-0":
            continue
        s.publish(prom, ns, pod, gpus, signals.get(pod, IDLE), now, node_name=node)


def policy_text(kubeconfig: Path, prometheus: str, *, extra: str = "") -> str:
    return f"""\
version: 1
name: k8s
idle:
  allow_data_loss: false
  live_process_window_minutes: 600
  metrics:
    prometheus:
      url: {prometheus}
scope:
  kubernetes:
    kubeconfig: {kubeconfig}
    contexts: [test-cluster]
    page_size: 3
{extra}"""
