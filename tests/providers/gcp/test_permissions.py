"""deploy/gcp-custom-role.yaml lists exactly the permissions the GCP adapter's calls need.

Every adapter method runs against the wire fakes; each request the fakes saw is mapped
to its IAM permission. A call missing from the role fails in production with 403; a
permission no call uses is privilege nobody needs.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import yaml

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.instances import InstanceState
from gpuplan.usecases.clouds.registry import entry_of
from tests.fakes.gcp_compute import ALSO_NEEDED, PERMISSIONS
from tests.fakes.gcp_world import PROJECT, GcpWorld
from tests.fakes.scenarios import PERIODS, WINDOW

ROLE = Path(__file__).resolve().parents[3] / entry_of(Provider.GCP).permission_file
TERMINATE_ROLE = ROLE.with_name("gcp-custom-role-terminate.yaml")
GRPC_PERMISSIONS = {"ListTimeSeries": "monitoring.timeSeries.list"}


def test_the_custom_role_matches_the_calls_the_adapter_makes(gcp: GcpWorld) -> None:
    ids = [gcp.compute.add(PROJECT, "us-central1-a", f"vm{i}", "a2-highgpu-1g") for i in range(4)]
    gcp.publish(ids[0], 0, PERIODS[-1] + timedelta(seconds=5), 1.0)
    provider = gcp.provider()
    vms = provider.list_instances()
    provider.fetch_utilisation(vms, start=WINDOW[0], end=WINDOW[1], period_minutes=5)
    fresh = provider.refresh(vms[0])
    provider.tag(fresh, {"gpuplan-reason": "idle-60m-lt5pct"})
    provider.untag(fresh, ["gpuplan-reason"])
    assert provider.stop(vms[0]) is InstanceState.STOPPED
    assert provider.suspend(vms[1]) is InstanceState.SUSPENDED
    assert provider.start(provider.refresh(vms[0])) is InstanceState.RUNNING
    assert gcp.compute.status(PROJECT, "vm0") == "RUNNING"
    used = {PERMISSIONS[name] for name in gcp.compute.calls}
    used |= {GRPC_PERMISSIONS[name] for name in gcp.monitoring.calls}
    # stopped_for: snapshot the disks, find them by label, then delete the instance.
    made = provider.snapshot(vms[2], "gpuplan-step=abc123")
    assert made and provider.snapshots_labelled(vms[2], "gpuplan-step=abc123") == [made]
    assert provider.terminate(vms[2]) is InstanceState.TERMINATED
    terminating = {PERMISSIONS[name] for name in gcp.compute.calls} - used
    terminating |= {p for name in gcp.compute.calls for p in ALSO_NEEDED.get(name, ())}

    role = yaml.safe_load(ROLE.read_text(encoding="utf-8"))
    assert set(role["includedPermissions"]) == used  # a missing or an extra grant fails
    assert len(role["includedPermissions"]) == len(used)
    assert not any("delete" in p for p in role["includedPermissions"])
    opt_in = yaml.safe_load(TERMINATE_ROLE.read_text(encoding="utf-8"))
    assert (
        opt_in["includedPermissions"]
        == sorted(terminating)
        == [
            "compute.disks.createSnapshot",
            "compute.instances.delete",
            "compute.snapshots.create",
            "compute.snapshots.list",
            "compute.snapshots.setLabels",
        ]
    )
