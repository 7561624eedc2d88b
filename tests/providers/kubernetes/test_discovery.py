"""Discovery through the fake API server: capacity-type labels of Karpenter, EKS, GKE and
AKS, AMD GPUs, shared GPUs (time-slicing, MIG) reported and not priced, owners followed,
finished pods left out, namespaces excluded, and per-pod metrics joined by identity."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.core.catalog.offers import PricingModel, Provider
from gpuplan.loaders.catalog import load_catalog
from gpuplan.providers.kubernetes.adapter import KubeAdapter
from gpuplan.providers.kubernetes.client import make_client
from gpuplan.providers.kubernetes.discovery import Reader
from gpuplan.providers.kubernetes.pod_metrics import PodMetrics
from gpuplan.usecases.clouds import registry as cloud_registry
from tests.fakes.http import serve
from tests.fakes.kubernetes import scenario as s
from tests.fakes.kubernetes.prometheus import PodPrometheus
from tests.fakes.kubernetes.scenario import Signals
from tests.fakes.kubernetes.server import Cluster, KubeApi, serve_cluster

NOW = datetime.now(UTC).replace(second=0, microsecond=0)


@pytest.fixture
def api() -> KubeApi:
    return KubeApi()


@pytest.fixture
def served(api: KubeApi, tmp_path: Path) -> Iterator[Cluster]:
    with serve_cluster(api, tmp_path) as cluster:
        yield cluster


def adapter(c: Cluster, **reader: object) -> KubeAdapter:
    client = make_client(str(c.kubeconfig), c.context, in_cluster=False)
    provider = cloud_registry.entry_of(Provider("kubernetes")).provider
    return KubeAdapter(
        provider,
        c.context,
        client,
        Reader(client, **reader),  # type: ignore[arg-type]
        catalog=load_catalog(),
    )


@pytest.mark.parametrize(
    ("labels", "kind", "region", "pricing"),
    [
        ({"karpenter.sh/capacity-type": "spot"}, "g5.xlarge", "us-east-1", PricingModel.SPOT),
        (
            {"karpenter.sh/capacity-type": "on-demand"},
            "g5.xlarge",
            "us-east-1",
            PricingModel.ON_DEMAND,
        ),
        ({"eks.amazonaws.com/capacityType": "SPOT"}, "g5.xlarge", "us-east-1", PricingModel.SPOT),
        ({"cloud.google.com/gke-spot": "true"}, "a2-highgpu-1g", "us-central1", PricingModel.SPOT),
        (
            {"cloud.google.com/gke-preemptible": "true"},
            "a2-highgpu-1g",
            "us-central1",
            PricingModel.SPOT,
        ),
        (
            {"kubernetes.azure.com/scalesetpriority": "spot"},
            "Standard_NC24ads_A100_v4",
            "eastus",
            PricingModel.SPOT,
        ),
        ({}, "Standard_NC24ads_A100_v4", "eastus", PricingModel.ON_DEMAND),
    ],
)
def test_capacity_type_labels_choose_the_catalog_price(
    api: KubeApi,
    served: Cluster,
    labels: dict[str, str],
    kind: str,
    region: str,
    pricing: PricingModel,
) -> None:
    s.node(api, "n", kind, region, 1, spot=labels)
    s.pod(api, "ml", "p", "n", 1)
    (unit,) = adapter(served).list_instances()
    offer = next(
        o
        for o in load_catalog().offers
        if o.instance_type.lower() == kind.lower() and o.region == region
    )
    assert unit.pricing is pricing
    assert unit.hourly_usd == offer.price(pricing) and unit.hourly_usd is not None
    assert unit.instance_type == kind and unit.region == region


def test_amd_gpus_count_and_the_share_is_per_gpu(api: KubeApi, served: Cluster) -> None:
    s.node(api, "m", "p4d.24xlarge", "us-east-1", 8, resource="amd.com/gpu")
    s.pod(api, "ml", "p", "m", 2, resource="amd.com/gpu")
    (unit,) = adapter(served).list_instances()
    assert unit.gpu_count == 2
    assert unit.hourly_usd == Decimal("21.957642") * 2 / 8


@pytest.mark.parametrize(
    ("labels", "said"),
    [
        ({"nvidia.com/gpu.replicas": "4"}, "time-slicing (4 replicas per GPU)"),
        ({"nvidia.com/gpu.sharing-strategy": "mps"}, "GPU sharing (mps)"),
    ],
)
def test_shared_gpus_are_reported_not_priced(
    api: KubeApi, served: Cluster, labels: dict[str, str], said: str
) -> None:
    s.node(api, "ts", "g5.xlarge", "us-east-1", 4, labels=labels)
    s.pod(api, "ml", "p", "ts", 1)
    a = adapter(served)
    (unit,) = a.list_instances()
    assert unit.hourly_usd is None
    notices = a.drain_notices()
    assert any(said in n and "not priced" in n for n in notices)
    assert not any("stranded" in n for n in notices)  # a shared node's free slices: unsaid


def test_mig_slices_are_reported_not_priced(api: KubeApi, served: Cluster) -> None:
    s.node(api, "mig", "p4d.24xlarge", "us-east-1", 7, resource="nvidia.com/mig-1g.5gb")
    s.pod(api, "ml", "p", "mig", 1, resource="nvidia.com/mig-1g.5gb")
    a = adapter(served)
    (unit,) = a.list_instances()
    assert unit.gpu_count == 1 and unit.hourly_usd is None
    assert any("MIG slices" in n for n in a.drain_notices())


def test_finished_pods_and_cpu_pods_hold_no_gpu(api: KubeApi, served: Cluster) -> None:
    s.node(api, "n", "g5.xlarge", "us-east-1", 1)
    s.pod(api, "ml", "done", "n", 1, phase="Succeeded")
    s.pod(api, "ml", "cpu", "n", 0)
    a = adapter(served)
    assert a.list_instances() == []
    assert any("1 of 1 GPUs stranded" in n for n in a.drain_notices())


def test_excluded_and_selected_namespaces_and_labels(api: KubeApi, served: Cluster) -> None:
    s.node(api, "n", "p4d.24xlarge", "us-east-1", 8)
    for ns in ("a", "b", "c"):
        s.pod(api, ns, "p", "n", 1, labels={"team": ns})
    assert [u.instance_id for u in adapter(served, exclude=("b",)).list_instances()] == [
        "a/Pod/p",
        "c/Pod/p",
    ]
    only = adapter(served, namespaces=("c",)).list_instances()
    assert [u.instance_id for u in only] == ["c/Pod/p"]
    assert any(r.path == "/api/v1/namespaces/c/pods" for r in api.requests)
    team = adapter(served, match_labels={"team": "a"}).list_instances()
    assert [u.instance_id for u in team] == ["a/Pod/p"]
    assert any(r.query.get("labelSelector") == "team=a" for r in api.requests)


def test_an_unknown_owner_kind_is_listed_and_refused(api: KubeApi, served: Cluster) -> None:
    s.node(api, "n", "p4d.24xlarge", "us-east-1", 8)
    s.pod(api, "ml", "ray-head", "n", 1)
    pod = api.get("api/v1", "pods", "ml", "ray-head")
    pod["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "ray.io/v1",
            "kind": "RayCluster",
            "name": "rc",
            "uid": "u",
            "controller": True,
        }
    ]
    (unit,) = adapter(served).list_instances()
    assert unit.instance_id == "ml/RayCluster/rc"
    assert "gpuplan does not act on it" in unit.risk.refused


def test_metrics_join_by_namespace_and_pod_in_both_layouts(api: KubeApi, served: Cluster) -> None:
    s.node(api, "n", "p4d.24xlarge", "us-east-1", 8)
    for ns in ("a", "b", "c"):
        s.pod(api, ns, "same-name", "n", 1)
    prom = PodPrometheus()
    s.publish(prom, "a", "same-name", 1, Signals(util=80.0), NOW, minutes=30)
    s.publish(prom, "b", "same-name", 1, Signals(util=2.0, exported=True), NOW, minutes=30)
    # c publishes the profiling metric (0.5 = 50%) and a util that disagrees: profiling wins
    s.publish(prom, "c", "same-name", 1, Signals(util=50.0, profiling=True), NOW, minutes=30)
    prom.publish(
        {"__name__": "DCGM_FI_DEV_GPU_UTIL", "namespace": "c", "pod": "same-name", "gpu": "0"},
        NOW,
        99.0,
    )
    with serve(prom) as url:
        a = adapter(served)
        a.metrics = PodMetrics(url, attempts=1)
        units = a.list_instances()
        got = a.fetch_utilisation(
            units, start=NOW - timedelta(minutes=30), end=NOW, period_minutes=5
        )
    peak = {k: max(max(p.values()) for p in v.utilisation.values()) for k, v in got.items()}
    assert peak == {"a/Pod/same-name": 80.0, "b/Pod/same-name": 2.0, "c/Pod/same-name": 50.0}
    assert set(got["b/Pod/same-name"].utilisation) == {"same-name/0"}
    assert all(v.cpu for v in got.values())


def test_an_owner_can_opt_out_too(api: KubeApi, served: Cluster) -> None:
    s.node(api, "n", "p4d.24xlarge", "us-east-1", 8)
    s.owner(api, "Deployment", "ml", "web", replicas=1, annotations={"gpuplan.io/opt-out": "y"})
    s.owner(api, "ReplicaSet", "ml", "web-1", replicas=1, parent=("Deployment", "web"))
    s.pod(api, "ml", "web-1-a", "n", 1, owner=("ReplicaSet", "web-1"))
    (unit,) = adapter(served).list_instances()
    assert unit.risk.refused == "opted out: Deployment web carries gpuplan.io/opt-out"


def test_owners_gpuplan_stopped_are_listed_with_no_pods_and_a_persons_stop_is_not(
    api: KubeApi, served: Cluster
) -> None:
    ours = {"gpuplan-stopped-at": "2026-12-02T19:30:00Z", "gpuplan-schedule": "office"}
    s.owner(api, "Deployment", "ml", "scaled", replicas=0, annotations={
        **ours, "gpuplan.io/replicas-before": "2"})  # fmt: skip
    s.owner(api, "Deployment", "ml", "by-hand", replicas=0)
    s.owner(api, "Notebook", "ml", "nb", annotations={**ours, "kubeflow-resource-stopped": "x"})
    s.owner(api, "Notebook", "ml", "nb-by-hand", annotations={"kubeflow-resource-stopped": "x"})
    job = s.owner(api, "CronJob", "ml", "nightly", annotations=ours)
    job["spec"]["suspend"] = True
    s.owner(api, "CronJob", "ml", "running", annotations=ours)  # marks left, not stopped
    s.owner(api, "Deployment", "kube-system", "sys", replicas=0, annotations=ours)
    s.owner(api, "Deployment", "ml", "other-team", replicas=0, annotations=ours,
            labels={"team": "b"})  # fmt: skip
    units = {u.instance_id: u for u in adapter(served, match_labels={"app": "scaled"})
             .list_instances()}  # fmt: skip
    assert set(units) == {"ml/Deployment/scaled"}  # the pod template's labels select
    units = {u.instance_id: u for u in adapter(served).list_instances()}
    assert {k: u.state.value for k, u in units.items()} == {
        "ml/Deployment/scaled": "stopped",
        "ml/Notebook/nb": "stopped",
        "ml/CronJob/nightly": "suspended",
        "kube-system/Deployment/sys": "stopped",
        "ml/Deployment/other-team": "stopped",
    }
    scaled = units["ml/Deployment/scaled"]
    assert scaled.hourly_usd is None and scaled.gpu_count == 0  # unknown, never zero dollars
    assert scaled.labels["gpuplan-schedule"] == "office"
    assert scaled.risk.undo == "gpuplan restore ml/Deployment/scaled (back to 2 replicas)"
    assert "never touched" in units["kube-system/Deployment/sys"].risk.refused
