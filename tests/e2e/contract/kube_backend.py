"""The contract suite's Kubernetes backend: the fake API server over TLS (the real
lightkube client) and the per-pod Prometheus fake.

A case is a Deployment (through its ReplicaSet) with one pod holding the case's GPUs,
named as the case; with local storage it is a bare pod with an ``emptyDir`` instead (what
deleting it erases). Its agent's samples are dcgm-exporter series with the pod's labels.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gpuplan.core.catalog.offers import Provider
from gpuplan.providers.base import CloudAdapter
from gpuplan.providers.kubernetes.adapter import KubeAdapter
from gpuplan.providers.kubernetes.client import make_client
from gpuplan.providers.kubernetes.discovery import Reader
from gpuplan.providers.kubernetes.pod_metrics import PodMetrics
from gpuplan.usecases.clouds import registry as cloud_registry
from gpuplan.usecases.clouds.adapters import CloudEntry
from tests.fakes.http import serve
from tests.fakes.kubernetes import scenario as s
from tests.fakes.kubernetes.prometheus import PodPrometheus
from tests.fakes.kubernetes.server import Cluster, KubeApi, serve_cluster
from tests.fakes.scenarios import Case, samples_of

NS = "research"


@dataclass
class KubeBackend:
    cluster: Cluster
    prom: PodPrometheus
    prom_url: str
    catalog: Any
    entry: CloudEntry
    scope: dict[str, Any]

    def build(self, case: Case, *, local_storage: bool = False) -> str:
        api = self.cluster.api
        if ("api/v1", "nodes", "", "gpu-node") not in api.objects:
            s.node(api, "gpu-node", "p4d.24xlarge", "us-east-1", 8)
        if local_storage:
            pod = case.name
            s.pod(api, NS, pod, "gpu-node", case.gpus, labels=dict(case.labels), empty_dir=True)
        else:
            s.owner(api, "Deployment", NS, case.name, replicas=1)
            s.owner(
                api,
                "ReplicaSet",
                NS,
                f"{case.name}-rs",
                replicas=1,
                parent=("Deployment", case.name),
            )
            pod = f"{case.name}-rs-0"
            s.pod(
                api,
                NS,
                pod,
                "gpu-node",
                case.gpus,
                owner=("ReplicaSet", f"{case.name}-rs"),
                labels=dict(case.labels),
            )
        for gpu, at, value in samples_of(case):
            labels = {
                "__name__": "DCGM_FI_DEV_GPU_UTIL",
                "namespace": NS,
                "pod": pod,
                "gpu": str(gpu),
            }
            self.prom.publish(labels, at, value)
        kind = "Pod" if local_storage else "Deployment"
        return f"{NS}/{kind}/{case.name}"

    def adapters(self) -> list[CloudAdapter]:
        c = self.cluster
        client = make_client(str(c.kubeconfig), c.context, in_cluster=False)
        return [
            KubeAdapter(
                self.entry.provider,
                c.context,
                client,
                Reader(client),
                catalog=self.catalog,
                metrics=PodMetrics(self.prom_url, attempts=1),
            )
        ]


def kube(request: pytest.FixtureRequest) -> Iterator[KubeBackend]:
    entry = cloud_registry.entries_by_provider()[Provider("kubernetes")]
    folder: Path = request.getfixturevalue("tmp_path")
    prom = PodPrometheus()
    with serve(prom) as url, serve_cluster(KubeApi(), folder) as cluster:
        scope = {
            "kubernetes": {"kubeconfig": str(cluster.kubeconfig), "contexts": [cluster.context]}
        }
        yield KubeBackend(cluster, prom, url, request.getfixturevalue("catalog"), entry, scope)
