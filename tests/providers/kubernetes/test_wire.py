"""The Kubernetes provider's real lightkube client against the fake API server over TLS:
paging, RBAC refusals, conflicts, throttling, patch content types, dry runs and tokens."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpuplan.core.catalog.offers import Provider
from gpuplan.providers.base import ProviderError
from gpuplan.providers.kubernetes import reclaim
from gpuplan.providers.kubernetes.adapter import KubeAdapter
from gpuplan.providers.kubernetes.client import call, make_client
from gpuplan.providers.kubernetes.discovery import Reader
from gpuplan.usecases.clouds import registry as cloud_registry
from tests.fakes.kubernetes import scenario as s
from tests.fakes.kubernetes.server import Cluster, KubeApi, serve_cluster

NOW = datetime(2026, 12, 4, 12, 0, tzinfo=UTC)
APPS = "apis/apps/v1"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    api = KubeApi()
    s.node(api, "n1", "p4d.24xlarge", "us-east-1", 8)
    s.owner(api, "Deployment", "ml", "web", replicas=3)
    s.owner(api, "ReplicaSet", "ml", "web-1", replicas=3, parent=("Deployment", "web"))
    for i in range(5):
        s.pod(api, "ml", f"web-1-{i}", "n1", 1, owner=("ReplicaSet", "web-1"))
    s.owner(api, "Notebook", "ml", "nb")
    with serve_cluster(api, tmp_path) as served:
        yield served


def adapter(c: Cluster, page_size: int = 500) -> KubeAdapter:
    client = make_client(str(c.kubeconfig), c.context, in_cluster=False)
    provider = cloud_registry.entry_of(Provider("kubernetes")).provider
    return KubeAdapter(provider, c.context, client, Reader(client, page_size=page_size))


def test_every_list_pages_with_limit_and_continue(cluster: Cluster) -> None:
    units = adapter(cluster, page_size=2).list_instances()
    assert [u.instance_id for u in units] == ["ml/Deployment/web"]
    assert units[0].gpu_count == 5
    pods = [r for r in cluster.api.requests if r.path == "/api/v1/pods"]
    assert [r.query.get("continue") is not None for r in pods] == [False, True, True]
    assert all(r.query["limit"] == "2" for r in pods)
    lists = {r.path for r in cluster.api.requests if r.method == "GET"}
    assert all(r.query.get("limit") == "2" for r in cluster.api.requests if r.path in lists)


def test_rbac_refusal_is_one_line_naming_the_role(cluster: Cluster) -> None:
    cluster.api.forbidden.add(("list", "pods"))
    with pytest.raises(ProviderError) as err:
        adapter(cluster).list_instances()
    assert "list pods: forbidden (RBAC)" in err.value.message
    assert "deploy/kubernetes-gpuplan-clusterrole.yaml" in err.value.message


def test_a_stale_resource_version_is_a_conflict_and_nothing_is_scaled(cluster: Cluster) -> None:
    api = cluster.api
    client = make_client(str(cluster.kubeconfig), cluster.context, in_cluster=False)
    # another writer changes the Deployment right after gpuplan reads it
    api.after_read["/apis/apps/v1/namespaces/ml/deployments/web"] = lambda: api.touch(
        APPS, "deployments", "ml", "web"
    )
    with pytest.raises(ProviderError) as err:
        reclaim.reclaim(client, "ml", "Deployment", "web", NOW)
    assert "conflict: the object changed since it was read" in err.value.message
    assert api.get(APPS, "deployments", "ml", "web")["spec"]["replicas"] == 3
    assert not [r for r in api.writes() if r.path.endswith("/scale")]


def test_429_is_retried_after_the_servers_retry_after(cluster: Cluster) -> None:
    cluster.api.throttle.extend([3, 1])
    client = make_client(str(cluster.kubeconfig), cluster.context, in_cluster=False)
    from lightkube.resources.core_v1 import Node

    waits: list[float] = []
    nodes = call("list nodes", lambda: list(client.list(Node)), sleep=waits.append)
    assert [n.metadata.name for n in nodes] == ["n1"] and waits == [3.0, 1.0]


def test_throttled_past_the_attempts_is_one_line(cluster: Cluster) -> None:
    cluster.api.throttle.extend([0] * 10)
    client = make_client(str(cluster.kubeconfig), cluster.context, in_cluster=False)
    from lightkube.resources.core_v1 import Node

    with pytest.raises(ProviderError, match="still throttled"):
        call("list nodes", lambda: list(client.list(Node)), sleep=lambda _: None)


def test_scale_uses_the_subresource_with_a_merge_patch(cluster: Cluster) -> None:
    api = cluster.api
    client = make_client(str(cluster.kubeconfig), cluster.context, in_cluster=False)
    done = reclaim.reclaim(client, "ml", "Deployment", "web", NOW)
    assert "was 3" in done
    writes = [(r.method, r.path, r.content_type) for r in api.writes()]
    assert writes == [
        ("PATCH", "/apis/apps/v1/namespaces/ml/deployments/web", "application/merge-patch+json"),
        (
            "PATCH",
            "/apis/apps/v1/namespaces/ml/deployments/web/scale",
            "application/merge-patch+json",
        ),
    ]
    web = api.get(APPS, "deployments", "ml", "web")
    assert web["spec"]["replicas"] == 0
    assert reclaim.restore(client, "ml", "Deployment", "web") == (
        "scaled Deployment ml/web back to 3"
    )
    web = api.get(APPS, "deployments", "ml", "web")
    assert web["spec"]["replicas"] == 3
    assert reclaim.REPLICAS_ANNOTATION not in web["metadata"]["annotations"]


def test_a_custom_resource_refuses_a_strategic_merge_patch(cluster: Cluster) -> None:
    client = make_client(str(cluster.kubeconfig), cluster.context, in_cluster=False)
    from lightkube.types import PatchType

    from gpuplan.providers.kubernetes.discovery import notebook_resource

    body = {"metadata": {"annotations": {"x": "y"}}}
    with pytest.raises(ProviderError, match="HTTP 415"):
        call(
            "patch",
            lambda: client.patch(
                notebook_resource(), "nb", body, namespace="ml", patch_type=PatchType.STRATEGIC
            ),
        )
    # the notebook's stop goes out as a merge patch, which the server takes
    assert "kubeflow-resource-stopped" in reclaim.reclaim(client, "ml", "Notebook", "nb", NOW)


def test_a_json_patch_is_applied(cluster: Cluster) -> None:
    client = make_client(str(cluster.kubeconfig), cluster.context, in_cluster=False)
    from lightkube.resources.apps_v1 import Deployment
    from lightkube.types import PatchType

    ops = [{"op": "replace", "path": "/spec/replicas", "value": 1}]
    client.patch(Deployment, "web", ops, namespace="ml", patch_type=PatchType.JSON)
    assert cluster.api.get(APPS, "deployments", "ml", "web")["spec"]["replicas"] == 1
    assert cluster.api.requests[-1].content_type == "application/json-patch+json"


def test_dry_run_all_changes_nothing(cluster: Cluster) -> None:
    api = cluster.api
    before = api.snapshot()
    client = make_client(str(cluster.kubeconfig), cluster.context, in_cluster=False)
    for kind, name in (("Deployment", "web"), ("Notebook", "nb"), ("Pod", "web-1-0")):
        reclaim.reclaim(client, "ml", kind, name, NOW, dry_run=True)
    assert api.snapshot() == before
    writes = [r for r in api.requests if r.method != "GET"]
    assert len(writes) == 4 and all(r.query.get("dryRun") == "All" for r in writes)


def test_a_wrong_token_is_refused_and_not_printed(cluster: Cluster) -> None:
    cluster.api.token = "another-token"
    with pytest.raises(ProviderError) as err:
        adapter(cluster).list_instances()
    assert "HTTP 401" in err.value.message
    assert "fake-token-for-tests" not in err.value.message


def test_an_unknown_context_is_one_line(cluster: Cluster) -> None:
    with pytest.raises(ProviderError, match="context nope"):
        make_client(str(cluster.kubeconfig), "nope", in_cluster=False)


def test_a_bare_pod_cannot_be_restored(cluster: Cluster) -> None:
    client = make_client(str(cluster.kubeconfig), cluster.context, in_cluster=False)
    with pytest.raises(ProviderError, match="cannot be restored"):
        reclaim.restore(client, "ml", "Pod", "web-1-0")
    with pytest.raises(ProviderError, match="no replica count recorded"):
        reclaim.restore(client, "ml", "Deployment", "web")
