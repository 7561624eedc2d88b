"""End to end: ``gpuplan stop-idle --apply --json`` on GCP and Azure fakes over TLS,
including a child killed (SIGKILL) or stopped (SIGTERM) while a cloud call is held.

Samples are published around the real clock (the child reads it), flat per instance,
so a period boundary passing during the test changes nothing.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.e2e.clouds.harness import (
    GPUPLAN,
    PROJECT,
    SUB,
    Clouds,
    child_env,
    run_gpuplan,
    write_policy,
)
from tests.fakes.http import serve
from tests.fakes.prometheus import PrometheusFake

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
        metrics = f"idle:\n  metrics:\n    prometheus: {{url: {prom_url}}}\n"
        policy.write_text(text.replace("idle:\n", metrics))
        dry = run_gpuplan(["stop-idle", "--policy", str(policy), "--json"], env)
    assert dry.returncode == 0, dry.stderr
    verdicts = {d["name"]: d["verdict"] for d in json.loads(dry.stdout)["decisions"]}
    expected = {name: row[2] for name, row in ROWS.items()}
    assert verdicts == {**expected, **{f"az-{k}": v for k, v in expected.items()}}
    assert prom.calls["query_range"] == 8  # 4 signals per cloud scope, never per instance
    assert clouds.monitoring.calls["ListTimeSeries"] == 0
    assert clouds.azure.calls["metrics.getBatch"] == 0


def _held(fake: Any, name: str) -> tuple[threading.Event, threading.Event]:
    seen, release = threading.Event(), threading.Event()
    fake.holds[name] = (seen, release)
    return seen, release


def _start(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(GPUPLAN), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_gcp_sigkill_mid_stop_is_reconciled_by_the_next_run(
    clouds: Clouds, tmp_path: Path, ca_file: Path
) -> None:
    _world(clouds)
    env = child_env(tmp_path, clouds, ca_file)
    policy = write_policy(tmp_path, clouds)
    gcp_only = policy.read_text().split("  azure:")[0] + "  match_labels: {team: research}\n"
    policy.write_text(gcp_only)
    seen, release = _held(clouds.compute, "stop")
    child = _start(["stop-idle", "--policy", str(policy), "--apply", "--json"], env)
    assert seen.wait(60), "the child never called stop"
    child.kill()
    child.communicate(timeout=30)
    release.set()
    # GCP accepted the stop: the instance is on its way down, nothing was recorded.
    assert clouds.compute.status(PROJECT, "idle") in ("STOPPING", "TERMINATED")
    again = run_gpuplan(["stop-idle", "--policy", str(policy), "--apply", "--json"], env)
    assert again.returncode == 0, again.stderr
    (rec,) = json.loads(again.stdout)["reconciled"]
    assert rec["outcome"] == "stopped" and "reconciled" in rec["detail"]
    labels = clouds.compute.instances[(PROJECT, "idle")]["labels"]
    assert "gpuplan-stopped-at" in labels


def test_azure_sigterm_mid_deallocate_finishes_records_and_exits_143(
    clouds: Clouds, tmp_path: Path, ca_file: Path
) -> None:
    _world(clouds)
    for name in ("busy", "no-agent", "exempt", "other-team"):  # two idle VMs, one held
        clouds.azure.vms.pop(f"/subscriptions/{SUB}/resourcegroups/rg/providers/"
                             f"microsoft.compute/virtualmachines/{name}", None)  # fmt: skip
    clouds.azure.add_vm(SUB, "rg", "idle-2", "Standard_NC24ads_A100_v4", tags={"team": "research"})
    rid2 = next(k for k in clouds.azure.vms if k.endswith("/idle-2"))
    now = datetime.now(UTC)
    for minutes in range(0, 90):
        clouds.azure.publish(rid2, 0, now - timedelta(minutes=80 - minutes), 1.0)
    env = child_env(tmp_path, clouds, ca_file)
    policy = write_policy(tmp_path, clouds)
    text = policy.read_text()
    gcp_part = text[text.index("  gcp:") : text.index("  azure:")]
    policy.write_text(text.replace(gcp_part, ""))
    seen, release = _held(clouds.azure, "vms.deallocate")
    child = _start(["stop-idle", "--policy", str(policy), "--apply", "--json"], env)
    assert seen.wait(60), "the child never called deallocate"
    child.send_signal(signal.SIGTERM)
    release.set()
    out, err = child.communicate(timeout=60)
    assert child.returncode == 143, err
    acted = {d["name"]: d["action"] for d in json.loads(out)["decisions"]}
    assert sorted(acted.values()) == ["deallocated", "skipped"]
    assert clouds.azure.calls["vms.deallocate"] == 1
    assert "Traceback" not in err
