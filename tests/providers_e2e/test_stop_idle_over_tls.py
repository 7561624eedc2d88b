"""End to end: ``gpuplan stop-idle --apply --json`` on GCP and Azure fakes over TLS.

PENDING: collected once ``gpuplan.usecases.fleet.lifecycle_providers`` builds GCP and
Azure scopes through ``gpuplan.usecases.cloud_adapters.lifecycle_scopes`` (see the GCP /
Azure helper's report); then rename this file to ``test_stop_idle_over_tls.py``.

Samples are published around the real clock (the child reads it), flat per instance,
so a period boundary passing during the test changes nothing.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tests.cloudfakes.http import serve
from tests.cloudfakes.prometheus import PrometheusFake
from tests.providers_e2e.harness import (
    PROJECT,
    SUB,
    Clouds,
    child_env,
    run_gpuplan,
    write_policy,
)

# name -> (labels, GPU utilisation or None for no agent, verdict)
ROWS = {
    "idle": ({"team": "research"}, 1.0, "idle"),
    "busy": ({"team": "research"}, 80.0, "busy"),
    "no-agent": ({"team": "research"}, None, "unknown"),
    "exempt": ({"team": "research", "gpuplan-keep": "y"}, 0.0, "exempt"),
    "other-team": ({"team": "other"}, 0.0, "out_of_scope"),
}


def _world(clouds: Clouds) -> None:
    now = datetime.now(UTC)
    for name, (labels, value, _) in ROWS.items():
        iid = clouds.compute.add(PROJECT, "us-central1-a", name, "a2-highgpu-1g", labels=labels)
        rid = clouds.azure.add_vm(SUB, "rg", name, "Standard_NC24ads_A100_v4", tags=labels)
        if value is None:
            continue
        for minutes in range(0, 90):
            at = now - timedelta(minutes=80) + timedelta(minutes=minutes)
            clouds.monitoring.publish(PROJECT, iid, 0, at, value)
            clouds.azure.publish(rid, 0, at, value)


def test_stop_idle_dry_run_then_apply_on_gcp_and_azure(
    clouds: Clouds, tmp_path: Path, ca_file: Path
) -> None:
    _world(clouds)
    env = child_env(tmp_path, clouds, ca_file)
    policy = str(write_policy(tmp_path, clouds))
    dry = run_gpuplan(["stop-idle", "--policy", policy, "--json"], env)
    assert dry.returncode == 0, dry.stderr
    plan = json.loads(dry.stdout)
    verdicts = {(d["provider"], d["name"]): d["verdict"] for d in plan["decisions"]}
    assert verdicts == {
        (cloud, name): row[2] for cloud in ("gcp", "azure") for name, row in ROWS.items()
    }
    assert {d["action"] for d in plan["decisions"]} == {"none"}
    assert clouds.compute.calls["stop"] == 0 and clouds.azure.calls["vms.deallocate"] == 0

    done = run_gpuplan(["stop-idle", "--policy", policy, "--apply", "--json"], env)
    assert done.returncode == 0, done.stderr
    acted = {(d["provider"], d["name"]): d["action"] for d in json.loads(done.stdout)["decisions"]}
    assert acted[("gcp", "idle")] == "stopped"
    assert acted[("azure", "idle")] == "deallocated"
    assert {a for k, a in acted.items() if k[1] != "idle"} == {"none"}
    assert clouds.compute.status(PROJECT, "idle") == "TERMINATED"
    assert clouds.compute.status(PROJECT, "busy") == "RUNNING"
    assert clouds.monitoring.tokens  # gRPC over TLS with the service account's token


def test_prometheus_replaces_the_cloud_metrics_for_both_clouds(
    clouds: Clouds, tmp_path: Path, ca_file: Path
) -> None:
    now = datetime.now(UTC)
    prom = PrometheusFake()
    for name, (labels, value, _) in ROWS.items():
        iid = clouds.compute.add(PROJECT, "us-central1-a", name, "a2-highgpu-1g", labels=labels)
        rid = clouds.azure.add_vm(SUB, "rg", f"az-{name}", "Standard_NC24ads_A100_v4", tags=labels)
        vm_id = clouds.azure.vms[rid.lower()]["properties"]["vmId"]
        if value is None:
            continue
        for key in (iid, vm_id):  # dcgm-exporter relabelled with the id (Azure: the vmId)
            series = {"__name__": "DCGM_FI_DEV_GPU_UTIL", "instance_id": key, "gpu": "0"}
            for minutes in range(0, 90, 1):
                prom.publish(series, now - timedelta(minutes=80 - minutes), value)
    env = child_env(tmp_path, clouds, ca_file)
    with serve(prom) as prom_url:
        policy = write_policy(tmp_path, clouds)
        text = policy.read_text(encoding="utf-8")
        policy.write_text(text + f"idle:\n  metrics:\n    prometheus: {{url: {prom_url}}}\n")
        dry = run_gpuplan(["stop-idle", "--policy", str(policy), "--json"], env)
    assert dry.returncode == 0, dry.stderr
    verdicts = {d["name"]: d["verdict"] for d in json.loads(dry.stdout)["decisions"]}
    expected = {name: row[2] for name, row in ROWS.items()}
    assert verdicts == {**expected, **{f"az-{k}": v for k, v in expected.items()}}
    assert prom.calls["query_range"] == 8  # 4 signals per cloud scope, never per instance
    assert clouds.monitoring.calls["ListTimeSeries"] == 0
    assert clouds.azure.calls["metrics.getBatch"] == 0
