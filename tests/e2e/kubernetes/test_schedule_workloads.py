"""``gpuplan schedule`` on Kubernetes workloads, end to end through ``main()``: the fake
API server over TLS, a Prometheus fake, the ledger, and the wall clock frozen at a
weekday evening then the next morning in Berlin.

At off-hours the scheduled Deployment is scaled to 0, the scheduled Notebook gets its
stop annotation and the scheduled CronJob is suspended; their controllers then remove
the pods (done here by hand: the fake has no controllers), so at on-hours they are found
by gpuplan's own marks on the owner and started again: scaled back to the recorded
replicas, the annotation removed, the CronJob resumed. A Deployment a person scaled to 0,
and one ``stop-idle`` stopped, are never started. A dry run changes nothing: every write
goes out with ``dryRun=All``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

import gpuplan.loaders.catalog_files  # noqa: F401  # its models built before the clock is frozen
from gpuplan.cli.main import main
from tests.e2e.kubernetes import world
from tests.fakes.http import serve
from tests.fakes.kubernetes import scenario as s
from tests.fakes.kubernetes.prometheus import PodPrometheus
from tests.fakes.kubernetes.server import CORE, KubeApi, serve_cluster

WED_EVENING = datetime(2026, 12, 2, 19, 30, tzinfo=UTC)  # 20:30 in Berlin: off-hours
THU_MORNING = datetime(2026, 12, 3, 7, 30, tzinfo=UTC)  # 08:30 in Berlin: on-hours
OFFICE = {"gpuplan-schedule": "office"}
SCHEDULES = """\
schedules:
  named:
    office: {timezone: Europe/Berlin, on_hours: "08:00", off_hours: "19:00"}
"""
EVAL = "ml-eval/Deployment/eval-server"
NOTEBOOK = "research/Notebook/nb"
CRONJOB = "batch/CronJob/nightly"
MANUAL = "team-b/Deployment/manual"
IDLE_STOPPED = "team-b/Deployment/idle-stopped"
DEPLOYMENTS = ("apis/apps/v1", "deployments")
PODS = (
    ("ml-eval", "eval-rs-a"),
    ("ml-eval", "eval-rs-b"),
    ("research", "nb-0"),
    ("batch", "nightly-1-q"),
)


@dataclass
class Cluster:
    api: KubeApi
    args: list[str]


def build(api: KubeApi, prom: PodPrometheus) -> None:
    s.node(api, "p4d-a", "p4d.24xlarge", "us-east-1", 8)
    s.owner(api, "Deployment", "ml-eval", "eval-server", replicas=2, annotations=OFFICE)
    s.owner(
        api, "ReplicaSet", "ml-eval", "eval-rs", replicas=2, parent=("Deployment", "eval-server")
    )
    for pod in ("eval-rs-a", "eval-rs-b"):
        s.pod(api, "ml-eval", pod, "p4d-a", 1, owner=("ReplicaSet", "eval-rs"))
    s.owner(api, "Notebook", "research", "nb", annotations=OFFICE)
    s.owner(api, "StatefulSet", "research", "nb", replicas=1, parent=("Notebook", "nb"))
    s.pod(api, "research", "nb-0", "p4d-a", 1, owner=("StatefulSet", "nb"))
    s.owner(api, "CronJob", "batch", "nightly", annotations=OFFICE)
    s.owner(api, "Job", "batch", "nightly-1", parent=("CronJob", "nightly"))
    s.pod(api, "batch", "nightly-1-q", "p4d-a", 1, owner=("Job", "nightly-1"))
    # a person scaled this one to 0: no gpuplan mark, no pod
    s.owner(api, "Deployment", "team-b", "manual", replicas=0, annotations=OFFICE)
    # stop-idle stopped this one (its marks), not the schedule: the ledger says so
    s.owner(
        api,
        "Deployment",
        "team-b",
        "idle-stopped",
        replicas=0,
        annotations={
            **OFFICE,
            "gpuplan.io/replicas-before": "3",
            "gpuplan-stopped-at": "2026-12-01T10:00:00Z",
        },
    )
    for ns, pod in PODS:
        s.publish(prom, ns, pod, 1, world.IDLE, WED_EVENING, node_name="p4d-a")


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Cluster]:
    api, prom = KubeApi(), PodPrometheus()
    build(api, prom)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("GPUPLAN_DB", str(tmp_path / "ledger.sqlite3"))
    with serve(prom) as prom_url, serve_cluster(api, tmp_path) as served:
        policy = tmp_path / "policy.yaml"
        text = world.policy_text(served.kubeconfig, prom_url, extra=SCHEDULES)
        policy.write_text(text, encoding="utf-8")
        yield Cluster(api, ["schedule", "--policy", str(policy), "--json"])


def run(args: list[str], at: datetime, capsys: pytest.CaptureFixture[str]) -> tuple[int, Any]:
    with freeze_time(at):
        code = main(args)
    return code, json.loads(capsys.readouterr().out)


def by_id(done: Any) -> dict[str, dict[str, Any]]:
    return {d["instance_id"]: d for d in done["decisions"]}


def deployment(api: KubeApi, ns: str, name: str) -> dict[str, Any]:
    return api.get(*DEPLOYMENTS, ns, name)


def controllers_remove_pods(api: KubeApi) -> None:
    """What the Deployment and Notebook controllers do after a stop."""
    for ns, pod in PODS:
        del api.objects[(CORE, "pods", ns, pod)]


def test_off_hours_stops_and_on_hours_starts_only_what_the_schedule_stopped(
    cluster: Cluster, capsys: pytest.CaptureFixture[str]
) -> None:
    api = cluster.api
    code, done = run([*cluster.args, "--apply"], WED_EVENING, capsys)
    assert code == 0, done["problems"]
    found = by_id(done)
    assert {k: found[k]["action"] for k in (EVAL, NOTEBOOK, CRONJOB)} == {
        EVAL: "stopped",
        NOTEBOOK: "stopped",
        CRONJOB: "stopped",  # suspended
    }
    assert found[IDLE_STOPPED]["action"] == "none"  # listed (gpuplan's marks), stopped
    assert MANUAL not in found  # no GPU pod and no gpuplan mark: not a unit
    assert deployment(api, "ml-eval", "eval-server")["spec"]["replicas"] == 0
    notebook = api.get("apis/kubeflow.org/v1", "notebooks", "research", "nb")
    assert "kubeflow-resource-stopped" in notebook["metadata"]["annotations"]
    assert api.get("apis/batch/v1", "cronjobs", "batch", "nightly")["spec"]["suspend"] is True
    controllers_remove_pods(api)
    before = api.snapshot()

    # on-hours, dry run: the starts are planned and checked by the API server, not stored
    start = len(api.requests)
    code, plan = run(cluster.args, THU_MORNING, capsys)
    assert code == 0, plan["problems"]
    planned = by_id(plan)
    assert {k: (d["planned_action"], d["action"]) for k, d in planned.items()} == {
        EVAL: ("start", "none"),
        NOTEBOOK: ("start", "none"),
        CRONJOB: ("start", "none"),
        IDLE_STOPPED: ("none", "none"),
    }
    assert "dryRun=All" in planned[EVAL]["detail"]
    assert "scaled Deployment ml-eval/eval-server back to 2" in planned[EVAL]["detail"]
    assert "not by gpuplan schedule" in planned[IDLE_STOPPED]["reason"]
    assert api.snapshot() == before
    writes = [r for r in api.requests[start:] if r.method != "GET"]
    assert writes and all(r.dry_run for r in writes)

    code, done = run([*cluster.args, "--apply"], THU_MORNING, capsys)
    assert code == 0, done["problems"]
    found = by_id(done)
    assert {k: d["action"] for k, d in found.items()} == {
        EVAL: "started",
        NOTEBOOK: "started",
        CRONJOB: "started",
        IDLE_STOPPED: "none",
    }
    started = deployment(api, "ml-eval", "eval-server")
    assert started["spec"]["replicas"] == 2
    assert "gpuplan.io/replicas-before" not in started["metadata"]["annotations"]
    notebook = api.get("apis/kubeflow.org/v1", "notebooks", "research", "nb")
    assert "kubeflow-resource-stopped" not in notebook["metadata"]["annotations"]
    assert api.get("apis/batch/v1", "cronjobs", "batch", "nightly")["spec"]["suspend"] is False
    assert deployment(api, "team-b", "manual")["spec"]["replicas"] == 0
    assert deployment(api, "team-b", "idle-stopped")["spec"]["replicas"] == 0
    touched = {r.path for r in api.writes()}
    assert not any("/manual" in p or "/idle-stopped" in p for p in touched)

    # started once: the next on-hours run finds nothing stopped by the schedule to start
    code, again = run([*cluster.args, "--apply"], THU_MORNING, capsys)
    assert code == 0
    assert {d["action"] for d in again["decisions"]} == {"none"}

    # history lists the schedule runs, newest first, with what each did
    code, runs = run(["history", "--json"], THU_MORNING, capsys)
    assert code == 0
    assert [(r["kind"], r["dry_run"], r["actions"]) for r in runs] == [
        ("schedule", False, {}),
        ("schedule", False, {"started": 3}),
        ("schedule", True, {}),  # a dry run records no action
        ("schedule", False, {"stopped": 3}),
    ]
    code, runs = run(["history", "--kind", "stop-idle", "--json"], THU_MORNING, capsys)
    assert (code, runs) == (0, [])


def test_a_schedules_calls_are_within_the_cluster_role(
    cluster: Cluster, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.providers.kubernetes.test_clusterrole import role_verbs, verb_of

    api = cluster.api
    assert run([*cluster.args, "--apply"], WED_EVENING, capsys)[0] == 0
    controllers_remove_pods(api)
    assert run(cluster.args, THU_MORNING, capsys)[0] == 0
    assert run([*cluster.args, "--apply"], THU_MORNING, capsys)[0] == 0
    assert api.writes()
    assert {verb_of(r) for r in api.requests} - role_verbs() == set()
