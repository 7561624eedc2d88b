"""End to end through ``gpuplan.cli.main.main()``: a cluster scenario on the fake API
server over TLS (the real lightkube client) and a Prometheus fake with dcgm-exporter and
cAdvisor series per pod.

Judged from the API server's request log and its objects: exactly the idle workloads are
acted on, each by its owner's kind, with the undo recorded; nothing else is written; a
dry run writes nothing (its checks go out with ``dryRun=All``); a metrics outage gives
unknown and no action; dollars per workload are the node's price x the pod's share.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpuplan.cli.main import main
from gpuplan.core.catalog.offers import PricingModel
from gpuplan.loaders.catalog import load_catalog
from tests.e2e.kubernetes import world
from tests.fakes.http import serve
from tests.fakes.kubernetes.prometheus import PodPrometheus
from tests.fakes.kubernetes.server import Cluster, KubeApi, serve_cluster


@dataclass
class Setup:
    cluster: Cluster
    prom: PodPrometheus
    policy: Path
    db: Path


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Setup]:
    api, prom = KubeApi(), PodPrometheus()
    world.build(api)
    world.metrics(prom, datetime.now(UTC))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    db = tmp_path / "ledger.sqlite3"
    monkeypatch.setenv("GPUPLAN_DB", str(db))
    with serve(prom) as prom_url, serve_cluster(api, tmp_path) as cluster:
        policy = tmp_path / "policy.yaml"
        policy.write_text(world.policy_text(cluster.kubeconfig, prom_url), encoding="utf-8")
        yield Setup(cluster, prom, policy, db)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    code = main(args)
    out = capsys.readouterr().out
    return code, json.loads(out) if "--json" in args else out


def by_id(decisions: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["instance_id"]: d for d in decisions}


def test_dry_run_decides_every_workload_and_changes_nothing(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    api = setup.cluster.api
    before = api.snapshot()
    code, plan = run(["stop-idle", "--policy", str(setup.policy), "--json"], capsys)
    assert code == 0
    found = by_id(plan["decisions"])
    assert {k: (d["verdict"], d["skip"]) for k, d in found.items()} == {
        k: (v[0], v[2]) for k, v in world.EXPECTED.items()
    }
    assert {d["action"] for d in plan["decisions"]} == {"none"}
    # nothing stored; every write went out as the API server's dry run
    assert api.snapshot() == before
    writes = [r for r in api.requests if r.method != "GET"]
    assert writes and all(r.dry_run for r in writes)
    assert "dryRun=All" in found["ml-eval/Deployment/eval-server"]["detail"]
    assert (
        "scaled Deployment ml-eval/eval-server to 0 (was 2"
        in (found["ml-eval/Deployment/eval-server"]["detail"])
    )


def test_apply_acts_on_exactly_the_idle_workloads_by_owner_kind(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    api = setup.cluster.api
    before = api.snapshot()
    code, done = run(["stop-idle", "--policy", str(setup.policy), "--apply", "--json"], capsys)
    assert code == 0, done["problems"]
    found = by_id(done["decisions"])
    assert {k: d["action"] for k, d in found.items()} == {
        k: v[1] for k, v in world.EXPECTED.items()
    }
    for key, detail in ((k, found[k]["detail"]) for k in world.ACTED):
        assert f"undo: gpuplan restore {key}" in detail
    # the writes touched the acted owners only (plus nothing else), with the right types
    written = {(r.path, r.content_type) for r in api.writes()}
    paths = {p for p, _ in written}
    assert paths == {
        "/apis/kubeflow.org/v1/namespaces/research/notebooks/idle-nb",
        "/apis/apps/v1/namespaces/ml-eval/deployments/eval-server",
        "/apis/apps/v1/namespaces/ml-eval/deployments/eval-server/scale",
        "/apis/batch/v1/namespaces/batch/cronjobs/nightly",
    }
    assert not any(r.method == "DELETE" for r in api.requests)
    assert (
        "/apis/apps/v1/namespaces/ml-eval/deployments/eval-server/scale",
        "application/merge-patch+json",
    ) in written
    notebook_types = {t for p, t in written if "notebooks" in p}
    assert notebook_types == {"application/merge-patch+json"}  # a CRD: never strategic
    after = api.snapshot()
    changed = {k for k in before if before[k] != after.get(k)}
    assert {k[3] for k in changed} == {"idle-nb", "eval-server", "nightly"}
    deployment = api.get("apis/apps/v1", "deployments", "ml-eval", "eval-server")
    assert deployment["spec"]["replicas"] == 0
    assert deployment["metadata"]["annotations"]["gpuplan.io/replicas-before"] == "2"
    assert api.get("apis/batch/v1", "cronjobs", "batch", "nightly")["spec"]["suspend"] is True
    notebook = api.get("apis/kubeflow.org/v1", "notebooks", "research", "idle-nb")
    assert "kubeflow-resource-stopped" in notebook["metadata"]["annotations"]
    # the ledger holds each intent, settled, with its undo
    rows = (
        sqlite3.connect(setup.db)
        .execute(
            "SELECT instance_id, outcome, detail FROM actions WHERE outcome IN "
            "('stopped', 'suspended')"
        )
        .fetchall()
    )
    assert {r[0] for r in rows} == set(world.ACTED)
    assert all("undo: gpuplan restore" in r[2] for r in rows)

    # restore brings the Deployment back to its recorded count, and says so in the ledger
    key = "ml-eval/Deployment/eval-server"
    code, back = run(["restore", key, "--policy", str(setup.policy), "--apply", "--json"], capsys)
    assert code == 0 and back["ok"], back
    deployment = api.get("apis/apps/v1", "deployments", "ml-eval", "eval-server")
    assert deployment["spec"]["replicas"] == 2
    assert "gpuplan.io/replicas-before" not in deployment["metadata"]["annotations"]
    restored = (
        sqlite3.connect(setup.db)
        .execute("SELECT outcome FROM actions WHERE action = 'restore'")
        .fetchall()
    )
    assert restored == [("restored",)]


def test_dollars_per_workload_are_node_price_times_share(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    code, fleet = run(["fleet", "--policy", str(setup.policy), "--json"], capsys)
    assert code == 0
    catalog = load_catalog()

    def price(node: str) -> Decimal:
        kind, region, gpus, labels = world.NODES[node]
        spot = PricingModel.SPOT if "spot" in str(labels).lower() else PricingModel.ON_DEMAND
        offer = next(o for o in catalog.offers if o.instance_type == kind and o.region == region)
        hourly = offer.price(spot)
        assert hourly is not None
        return hourly / gpus

    found = by_id(fleet["instances"])
    assert set(found) == set(world.EXPECTED)
    for key, record in found.items():
        pods = record["pods"]
        expected = sum(price(world.PODS[p][1]) * world.PODS[p][2] for p in pods)
        got = Decimal(str(record["hourly_usd"]))
        assert abs(got - expected) <= expected / 100, key
        assert record["namespace"] == key.split("/")[0]
        assert record["owner_kind"] == key.split("/")[1]
    # a p4d share: $21.957642/h on demand, one GPU of eight
    assert (
        Decimal(str(found["research/Notebook/idle-nb"]["hourly_usd"])) == Decimal("21.957642") / 8
    )
    assert found["batch/CronJob/nightly"]["pricing"] == "spot"


def test_stranded_gpus_are_reported_per_node(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = run(["fleet", "--policy", str(setup.policy)], capsys)
    assert code == 0
    assert "Kubernetes workloads:" in text
    err = capsys.readouterr().err
    del err  # notices went to stderr during main(); re-run capturing them
    main(["fleet", "--policy", str(setup.policy)])
    notices = capsys.readouterr().err
    assert "node g5-idle-node (g5.xlarge, us-east-1, on_demand): 1 of 1 GPUs stranded" in (
        " ".join(notices.split())
    )
    assert "node p4d-a (p4d.24xlarge, us-east-1, on_demand): 1 of 8 GPUs stranded" in (
        " ".join(notices.split())
    )


def test_a_metrics_outage_gives_unknown_and_no_action(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    setup.prom.down = True
    api = setup.cluster.api
    before = api.snapshot()
    code, done = run(["stop-idle", "--policy", str(setup.policy), "--apply", "--json"], capsys)
    assert {d["verdict"] for d in done["decisions"]} == {"unknown"}
    assert {d["action"] for d in done["decisions"]} == {"none"}
    assert api.writes() == [] and api.snapshot() == before
    assert code == 1  # the outage is a problem of the run


def test_waste_and_audit_group_by_namespace_and_owner(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["stop-idle", "--policy", str(setup.policy), "--json"], capsys)[0] == 0
    code, waste = run(["waste", "--by", "namespace", "--json"], capsys)
    assert code == 0 and waste["by"] == "namespace"
    idle_namespaces = {k.split("/")[0] for k, v in world.EXPECTED.items() if v[0] == "idle"}
    assert {g["namespace"] for g in waste["totals"]} == idle_namespaces
    eval_group = next(g for g in waste["totals"] if g["namespace"] == "ml-eval")
    assert eval_group["idle_gpu_hours"] == 2.0  # two replicas, one GPU each
    code, by_owner = run(["waste", "--by", "owner", "--json"], capsys)
    owners = {g["owner"] for g in by_owner["totals"]}
    assert "Deployment/eval-server" in owners and "Notebook/busy-nb" not in owners
    code, audit = run(
        ["audit", "--policy", str(setup.policy), "--by", "namespace", "--since", "24h", "--json"],
        capsys,
    )
    assert code in (0, 1)
    text = json.dumps(audit)
    assert "ml-eval" in text and "kube-system" in text


def test_fleet_json_lists_stranded_gpus_per_node(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    code, fleet = run(["fleet", "--policy", str(setup.policy), "--json"], capsys)
    assert code == 0
    spare = {r["node"]: (r["gpus"], r["hourly_usd"]) for r in fleet["stranded"]}
    assert set(spare) == {"p4d-a", "p4d-spot", "g5-idle-node"}
    assert spare["p4d-spot"][0] == 5 and spare["p4d-a"][0] == 1
    assert Decimal(str(spare["g5-idle-node"][1])) == Decimal("1.006")


def test_a_notice_is_an_annotation_on_the_owner_and_nothing_is_scaled(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    text = setup.policy.read_text(encoding="utf-8")
    setup.policy.write_text(text.replace("idle:\n", "idle:\n  notice_minutes: 30\n", 1))
    code, done = run(["stop-idle", "--policy", str(setup.policy), "--apply", "--json"], capsys)
    assert code == 0, done["problems"]
    found = by_id(done["decisions"])
    notified = {k for k, d in found.items() if d["action"] == "notified"}
    # the bare pod gets its notice too: the data-loss skip comes when the notice is due
    api = setup.cluster.api
    assert notified == {*world.ACTED, "research/Pod/scratch"}
    assert {k for k, d in found.items() if d["skip"] == "refused"} == {
        k for k, v in world.EXPECTED.items() if v[2] == "refused"
    }
    refused_paths = ("kube-system", "gpu-agent", "api-gpu", "keep-me")
    assert not [r for r in api.writes() if any(p in r.path for p in refused_paths)]
    assert not [r for r in api.writes() if r.path.endswith("/scale") or r.method == "DELETE"]
    deployment = api.get("apis/apps/v1", "deployments", "ml-eval", "eval-server")
    assert "gpuplan-stop-after" in deployment["metadata"]["annotations"]
    assert deployment["spec"]["replicas"] == 2


def test_audit_never_advises_stop_idle_for_a_refused_workload(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    code, audit = run(["audit", "--policy", str(setup.policy), "--since", "24h", "--json"], capsys)
    assert code in (0, 1)
    advice = {r["instance_id"]: [a["kind"] for a in r["advice"]] for r in audit["instances"]}
    refused = [k for k, v in world.EXPECTED.items() if v[2] == "refused"]
    assert len(refused) == 4  # kube-system, DaemonSet, PDB, opt-out
    for key in refused:  # idle all day: the reason instead of stop-idle
        assert "stop-idle" not in advice[key] and "idle-refused" in advice[key], key
    assert "stop-idle" in advice["research/Notebook/idle-nb"]
