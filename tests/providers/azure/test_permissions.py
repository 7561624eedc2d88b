"""deploy/azure-role-definition.json lists exactly the actions the Azure adapter needs.

Every adapter method runs against the wire fake; each request it saw is mapped to its
RBAC action. An action missing from the role fails in production with 403; an action
no call uses is privilege nobody needs.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.instances import Action, InstanceState
from gpuplan.usecases.clouds.registry import entry_of
from tests.fakes.azure_arm import ACTIONS, ALSO_NEEDED
from tests.fakes.azure_world import SUB, AzureWorld
from tests.fakes.scenarios import PERIODS, WINDOW

ROLE = Path(__file__).resolve().parents[3] / entry_of(Provider.AZURE).permission_file
TERMINATE_ROLE = ROLE.with_name("azure-role-terminate.json")


def disks(n: int) -> dict[str, object]:
    """A VM's storage profile: an OS disk and one data disk, both managed."""
    base = f"/subscriptions/{SUB}/resourceGroups/rg/providers/Microsoft.Compute/disks/vm{n}"
    return {
        "osDisk": {"managedDisk": {"id": f"{base}-os"}},
        "dataDisks": [{"lun": 0, "managedDisk": {"id": f"{base}-data"}}],
    }


def test_the_role_definition_matches_the_calls_the_adapter_makes(azure: AzureWorld) -> None:
    ids = [
        azure.fake.add_vm(SUB, "rg", f"vm{i}", "Standard_NC999_new_v9", storageProfile=disks(i))
        for i in range(3)
    ]
    azure.fake.skus.append(
        {
            "resourceType": "virtualMachines",
            "name": "Standard_NC999_new_v9",
            "locations": ["eastus"],
            "capabilities": [{"name": "GPUs", "value": "1"}],
        }
    )
    azure.fake.publish(ids[0], 0, PERIODS[-1] + timedelta(seconds=5), 1.0)
    provider = azure.provider()
    vms = provider.list_instances()
    provider.fetch_utilisation(vms, start=WINDOW[0], end=WINDOW[1], period_minutes=5)
    fresh = provider.refresh(vms[0])
    provider.tag(fresh, {"gpuplan-reason": "idle-60m-lt5pct"})
    provider.untag(provider.refresh(vms[0]), ["gpuplan-reason"])
    assert provider.act(vms[0], Action.STOP) is InstanceState.DEALLOCATED
    assert provider.act(vms[0], Action.START) is InstanceState.RUNNING
    assert azure.fake.power(ids[0]) == "PowerState/running"
    used = {ACTIONS[name] for name in azure.fake.calls}
    # stopped_for: snapshot the managed disks, find them by label, then delete the VM.
    made = provider.snapshot(vms[1], "gpuplan-step=abc123")
    assert provider.snapshots_labelled(vms[1], "gpuplan-step=abc123") == made.split(",")
    assert provider.terminate(vms[1]) is InstanceState.TERMINATED
    terminating = {ACTIONS[name] for name in azure.fake.calls} - used
    terminating |= {a for name in azure.fake.calls for a in ALSO_NEEDED.get(name, ())}

    role = json.loads(ROLE.read_text(encoding="utf-8"))
    assert set(role["Actions"]) == used  # a missing or an extra grant fails
    assert len(role["Actions"]) == len(used)
    assert role["DataActions"] == [] and role["NotActions"] == []
    assert not any(a.endswith("/delete") or "*" in a for a in role["Actions"])
    opt_in = json.loads(TERMINATE_ROLE.read_text(encoding="utf-8"))
    assert (
        opt_in["Actions"]
        == sorted(terminating)
        == [
            "Microsoft.Compute/disks/read",
            "Microsoft.Compute/snapshots/read",
            "Microsoft.Compute/snapshots/write",
            "Microsoft.Compute/virtualMachines/delete",
        ]
    )
    assert opt_in["DataActions"] == [] and opt_in["NotActions"] == []
