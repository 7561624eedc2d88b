"""The ClusterRole in deploy/ holds exactly the verbs gpuplan's calls need.

A whole scenario runs through ``main()`` against the fake API server (fleet, a dry run,
``stop-idle --apply`` with every owner kind idle and data loss allowed, then ``restore``
of each restorable workload); the verbs are derived from the server's request log
(method and path, as the API server's authorizer derives them) and compared with the role.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from gpuplan.cli.main import main
from tests.e2e.kubernetes import world
from tests.fakes.http import serve
from tests.fakes.kubernetes import scenario as s
from tests.fakes.kubernetes.prometheus import PodPrometheus
from tests.fakes.kubernetes.server import PATH, KubeApi, Logged, serve_cluster

ROOT = Path(__file__).resolve().parents[3]
ROLE = ROOT / "deploy" / "kubernetes-gpuplan-clusterrole.yaml"


def verb_of(r: Logged) -> tuple[str, str, str]:
    """(API group, resource[/subresource], verb) of one request."""
    match = PATH.match(r.path)
    assert match is not None, r.path
    prefix = match["prefix"]
    group = "" if prefix == "api/v1" else prefix.split("/")[1]
    resource = match["plural"] + (f"/{match['sub']}" if match["sub"] else "")
    verb = {"GET": "get", "PATCH": "patch", "PUT": "update", "DELETE": "delete"}[r.method]
    if r.method == "GET" and match["name"] is None:
        verb = "list"
    return group, resource, verb


def role_verbs() -> set[tuple[str, str, str]]:
    role = yaml.safe_load(ROLE.read_text(encoding="utf-8"))
    assert role["kind"] == "ClusterRole"
    return {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def _extra(api: KubeApi, prom: PodPrometheus, now: datetime) -> None:
    """An idle workload of every kind the scenario leaves busy or refused."""
    s.node(api, "extra", "p4d.24xlarge", "us-east-1", 8)
    s.owner(api, "StatefulSet", "ml-eval", "cache", replicas=1)
    s.pod(api, "ml-eval", "cache-0", "extra", 1, owner=("StatefulSet", "cache"))
    s.owner(api, "ReplicaSet", "ml-eval", "orphan-rs", replicas=1)
    s.pod(api, "ml-eval", "orphan-rs-x", "extra", 1, owner=("ReplicaSet", "orphan-rs"))
    s.owner(api, "Job", "batch", "sweep")
    s.pod(api, "batch", "sweep-q", "extra", 1, owner=("Job", "sweep"))
    for ns, pod in (("ml-eval", "cache-0"), ("ml-eval", "orphan-rs-x"), ("batch", "sweep-q")):
        s.publish(prom, ns, pod, 1, world.IDLE, now, node_name="extra")


@pytest.fixture
def used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[set[tuple[str, str, str]]]:
    api, prom = KubeApi(), PodPrometheus()
    now = datetime.now(UTC)
    world.build(api)
    world.metrics(prom, now)
    _extra(api, prom, now)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GPUPLAN_DB", str(tmp_path / "ledger.sqlite3"))
    with serve(prom) as prom_url, serve_cluster(api, tmp_path) as cluster:
        policy = tmp_path / "policy.yaml"
        text = world.policy_text(cluster.kubeconfig, prom_url)
        policy.write_text(text.replace("allow_data_loss: false", "allow_data_loss: true"))
        assert main(["fleet", "--policy", str(policy), "--json"]) == 0
        assert main(["stop-idle", "--policy", str(policy), "--json"]) == 0
        assert main(["stop-idle", "--policy", str(policy), "--apply", "--json"]) == 0
        deleted = [r for r in api.writes() if r.method == "DELETE"]
        assert [r.path for r in deleted] == ["/api/v1/namespaces/research/pods/scratch"]
        for key in (
            "research/Notebook/idle-nb",
            "ml-eval/Deployment/eval-server",
            "batch/CronJob/nightly",
            "ml-eval/StatefulSet/cache",
            "ml-eval/ReplicaSet/orphan-rs",
            "batch/Job/sweep",
        ):
            assert main(["restore", key, "--policy", str(policy), "--apply"]) == 0, key
        yield {verb_of(r) for r in api.requests}


def test_the_role_holds_exactly_the_verbs_the_calls_need(
    used: set[tuple[str, str, str]],
) -> None:
    granted = role_verbs()
    assert used - granted == set(), "calls the role does not allow"
    assert granted - used == set(), "verbs no call uses"


def test_the_role_never_writes_nodes_or_reads_secrets() -> None:
    granted = role_verbs()
    assert {(g, r, v) for g, r, v in granted if r == "nodes"} == {("", "nodes", "list")}
    assert not any(r in ("secrets", "configmaps") for _, r, _ in granted)
    assert not any(v in ("create", "update", "deletecollection", "*") for _, _, v in granted)
