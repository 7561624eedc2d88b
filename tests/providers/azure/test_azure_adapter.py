"""The Azure adapter against wire fakes: listing, metrics, deallocate, tags, faults."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from gpuplan.core.catalog.offers import PricingModel
from gpuplan.core.lifecycle.instances import Action, Capability, InstanceState
from gpuplan.providers.azure import metrics
from gpuplan.providers.base import CloudAdapter, ProviderError
from tests.fakes.azure_world import SUB, AzureWorld
from tests.fakes.scenarios import CASES, PERIODS, RULE, WINDOW, verdict

A100 = "Standard_NC24ads_A100_v4"


def test_scenario_table_gives_the_same_verdicts_as_aws(azure: AzureWorld) -> None:
    for case in CASES:
        azure.build(case)
    provider = azure.provider()
    instances = provider.list_instances()
    samples = provider.fetch_utilisation(
        instances, start=WINDOW[0], end=WINDOW[1], period_minutes=RULE.period_minutes
    )
    got = {i.name: verdict(i, samples.get(i.instance_id)) for i in instances}
    assert got == {case.name: case.verdict for case in CASES}
    assert azure.fake.calls["metrics.getBatch"] == 4  # per region: GPU metrics, then CPU


def test_the_adapter_satisfies_the_protocol_and_stops_by_deallocating(azure: AzureWorld) -> None:
    provider = azure.provider()
    assert isinstance(provider, CloudAdapter)
    assert {Capability.DEALLOCATE, Capability.STOP} <= provider.capabilities


def test_listing_follows_absolute_next_links_and_maps_vms(azure: AzureWorld) -> None:
    for i in range(5):
        azure.fake.add_vm(SUB, "rg", f"vm{i}", A100, tags={"team": "research"})
    azure.fake.add_vm(SUB, "rg", "cpu", "Standard_D4s_v5")
    azure.fake.add_vm(SUB, "rg", "spot", A100, priority="Spot", evictionPolicy="Delete")
    azure.fake.add_vm(SUB, "rg", "off", A100, power="stopped")
    instances = azure.provider().list_instances()
    assert azure.fake.calls["vms.listAll"] == math.ceil(8 / azure.fake.page_size)
    by_name = {i.name: i for i in instances}
    assert set(by_name) == {"vm0", "vm1", "vm2", "vm3", "vm4", "spot", "off"}
    vm = by_name["vm0"]
    assert (vm.gpu, vm.gpu_count, vm.region, vm.account) == ("A100-80GB", 1, "eastus", SUB)
    assert vm.hourly_usd is not None and vm.hourly_usd > 3
    assert vm.attributes["resource_group"] == "rg"
    spot = by_name["spot"]
    assert spot.pricing is PricingModel.SPOT and spot.attributes["eviction_policy"] == "Delete"
    off = by_name["off"]
    assert off.state is InstanceState.STOPPED and off.attributes["bills_while_stopped"] == "true"
    assert spot.risk.spot_one_time and vm.risk.temp_disk_gb == 0
    # Asked once per location: the temporary disk of every GPU size (deallocate erases it).
    assert azure.fake.calls["skus.list"] == 1
    assert azure.credential.scopes[0] == (f"{azure.url}/.default",)


def test_resource_groups_in_scope_are_listed_one_by_one(azure: AzureWorld) -> None:
    azure.fake.add_vm(SUB, "Kept-RG", "kept", A100, power="deallocated")
    azure.fake.add_vm(SUB, "second", "also", A100)
    azure.fake.add_vm(SUB, "other", "dropped", A100)
    provider = azure.provider(resource_groups=["kept-rg", "second"])
    listed = {i.name: i.state for i in provider.list_instances()}
    assert listed == {"kept": InstanceState.DEALLOCATED, "also": InstanceState.RUNNING}
    assert azure.fake.calls["vms.list"] == 2 and azure.fake.calls["vms.listAll"] == 0
    assert azure.fake.calls["vmss.list"] == 2 and azure.fake.calls["vmss.listAll"] == 0


def test_unreadable_resource_skus_are_a_notice_not_a_failure(azure: AzureWorld) -> None:
    azure.fake.add_vm(SUB, "rg", "known", A100)
    azure.fake.add_vm(SUB, "rg", "new", "Standard_NC999_future_v9")
    azure.fake.fail("skus.list", 403)
    provider = azure.provider()
    assert [i.name for i in provider.list_instances()] == ["known"]
    (notice,) = provider.drain_notices()
    assert "resource SKUs in eastus unreadable (403)" in notice


def test_gpu_sizes_missing_from_the_catalog_come_from_resource_skus_once_per_location(
    azure: AzureWorld,
) -> None:
    for name in ("a", "b"):
        azure.fake.add_vm(SUB, "rg", name, "Standard_NC999_future_v9")
    azure.fake.skus.append(
        {
            "resourceType": "virtualMachines",
            "name": "Standard_NC999_future_v9",
            "locations": ["eastus"],
            "capabilities": [{"name": "GPUs", "value": "4"}],
        }
    )
    instances = azure.provider().list_instances()
    assert [(i.gpu, i.gpu_count) for i in instances] == [(None, 4.0), (None, 4.0)]
    assert azure.fake.calls["skus.list"] == 1


def test_flexible_members_are_managed_and_uniform_gpu_scale_sets_are_reported(
    azure: AzureWorld,
) -> None:
    vmss = f"/subscriptions/{SUB}/resourceGroups/mc/providers/Microsoft.Compute/"
    vmss += "virtualMachineScaleSets"
    azure.fake.add_vm(SUB, "rg", "flex-0", A100, virtualMachineScaleSet={"id": f"{vmss}/flex"})
    azure.fake.scale_sets += [
        {
            "id": f"{vmss}/aks-gpu",
            "name": "aks-gpu",
            "location": "eastus",
            "sku": {"name": A100, "capacity": 3},
            "properties": {"orchestrationMode": "Uniform"},
        },
        {
            "id": f"{vmss}/aks-cpu",
            "name": "aks-cpu",
            "location": "eastus",
            "sku": {"name": "Standard_D8s_v5", "capacity": 9},
            "properties": {"orchestrationMode": "Uniform"},
        },
    ]
    provider = azure.provider()
    (member,) = provider.list_instances()
    assert member.managed_by == "virtual machine scale set flex"
    (notice,) = provider.drain_notices()
    assert "aks-gpu (Standard_NC24ads_A100_v4 x 3)" in notice and "aks-cpu" not in notice
    assert provider.drain_notices() == []


def test_stop_deallocates_through_the_long_running_operation(azure: AzureWorld) -> None:
    rid = azure.fake.add_vm(SUB, "rg", "vm", A100)
    azure.fake.polls_until_done = 3
    provider = azure.provider()
    (vm,) = provider.list_instances()
    assert provider.act(vm, Action.STOP) is InstanceState.DEALLOCATED
    assert azure.fake.power(rid) == "PowerState/deallocated"
    assert azure.fake.calls["vms.deallocate"] == 1
    assert azure.fake.calls["operations.get"] >= 3
    assert provider.refresh(vm).state is InstanceState.DEALLOCATED


def test_terminate_deletes(azure: AzureWorld) -> None:
    rid = azure.fake.add_vm(SUB, "rg", "vm", A100)
    provider = azure.provider()
    (vm,) = provider.list_instances()
    assert provider.act(vm, Action.TERMINATE) is InstanceState.TERMINATED
    assert azure.fake.power(rid) is None


def test_throttling_and_5xx_are_retried(azure: AzureWorld) -> None:
    rid = azure.fake.add_vm(SUB, "rg", "vm", A100)
    azure.fake.fail("vms.listAll", 429, 503)
    azure.fake.fail("vms.deallocate", 429, 500)
    azure.fake.fail("operations.get", 502)
    provider = azure.provider()
    (vm,) = provider.list_instances()
    provider.act(vm, Action.STOP)
    assert azure.fake.calls["vms.listAll"] == 3
    assert azure.fake.calls["vms.deallocate"] == 3
    assert azure.fake.power(rid) == "PowerState/deallocated"


def test_persistent_errors_become_one_readable_provider_error(azure: AzureWorld) -> None:
    azure.fake.fail("vms.listAll", *[503] * 10)
    with pytest.raises(ProviderError, match=r"^azure .*: listing VMs: "):
        azure.provider(retry_total=1).list_instances()
    assert azure.fake.calls["vms.listAll"] == 2


def test_a_vm_deleted_between_plan_and_act_is_reported(azure: AzureWorld) -> None:
    rid = azure.fake.add_vm(SUB, "rg", "gone", A100)
    provider = azure.provider()
    (vm,) = provider.list_instances()
    del azure.fake.vms[rid.lower()]
    with pytest.raises(ProviderError, match="not found"):
        provider.refresh(vm)
    with pytest.raises(ProviderError, match="deallocating gone: not found"):
        provider.act(vm, Action.STOP)


def test_tags_merge_and_delete_at_the_vm_scope(azure: AzureWorld) -> None:
    rid = azure.fake.add_vm(SUB, "rg", "vm", A100, tags={"team": "research"})
    provider = azure.provider()
    (vm,) = provider.list_instances()
    provider.tag(vm, {"gpuplan-stop-after": "20261202t110000z"})
    assert azure.fake.vms[rid.lower()]["tags"] == {
        "team": "research",
        "gpuplan-stop-after": "20261202t110000z",
    }
    fresh = provider.refresh(vm)
    provider.untag(fresh, ["gpuplan-stop-after", "absent"])
    assert azure.fake.vms[rid.lower()]["tags"] == {"team": "research"}
    provider.untag(fresh, ["absent"])
    assert azure.fake.calls["tags.update"] == 2


def test_metrics_are_batched_fifty_per_call_per_region(azure: AzureWorld) -> None:
    ids = [azure.fake.add_vm(SUB, "rg", f"vm{i:03d}", A100) for i in range(120)]
    ids += [azure.fake.add_vm(SUB, "rg", "west", A100, location="westus3")]
    for rid in ids[::7]:
        azure.fake.publish(rid, 0, PERIODS[-1] + timedelta(seconds=30), 4.0)
    azure.fake.page_size = 100
    provider = azure.provider()
    instances = provider.list_instances()
    samples = provider.fetch_utilisation(
        instances, start=WINDOW[0], end=WINDOW[1], period_minutes=5
    )
    assert sorted(azure.fake.batch_sizes) == [1, 1, 20, 20, 50, 50, 50, 50]  # GPU and CPU
    assert set(samples) == set(ids[::7])
    assert samples[ids[0]].utilisation == {"0": {PERIODS[-1]: 4.0}}


def test_metrics_keep_every_gpu_of_a_sixteen_gpu_vm(azure: AzureWorld) -> None:
    rid = azure.fake.add_vm(SUB, "rg", "big", "Standard_ND96isr_H100_v5")
    for gpu in range(16):
        azure.fake.publish(rid, gpu, PERIODS[0] + timedelta(seconds=30), float(gpu))
    provider = azure.provider()
    samples = provider.fetch_utilisation(
        provider.list_instances(), start=WINDOW[0], end=WINDOW[1], period_minutes=5
    )
    assert len(samples[rid].utilisation) == 16


def test_metric_throttling_is_retried(azure: AzureWorld) -> None:
    rid = azure.fake.add_vm(SUB, "rg", "vm", A100)
    azure.fake.publish(rid, 0, PERIODS[-1] + timedelta(seconds=30), 2.0)
    azure.fake.fail("metrics.getBatch", 429, 503)
    provider = azure.provider()
    samples = provider.fetch_utilisation(
        provider.list_instances(), start=WINDOW[0], end=WINDOW[1], period_minutes=5
    )
    assert samples[rid].utilisation == {"0": {PERIODS[-1]: 2.0}}
    assert azure.fake.calls["metrics.getBatch"] == 4  # 2 retried, GPU metrics, CPU


@pytest.mark.parametrize(
    ("configured", "region", "endpoint", "audience"),
    [
        (
            None,
            "eastus",
            "https://eastus.metrics.monitor.azure.com",
            "https://metrics.monitor.azure.com",
        ),
        (
            "https://{region}.metrics.monitor.azure.us",
            "usgovvirginia",
            "https://usgovvirginia.metrics.monitor.azure.us",
            "https://metrics.monitor.azure.us",
        ),
        ("https://127.0.0.1:8443", "eastus", "https://127.0.0.1:8443", "https://127.0.0.1:8443"),
    ],
)
def test_metrics_endpoints_follow_the_cloud(
    configured: str | None, region: str, endpoint: str, audience: str
) -> None:
    assert metrics.endpoint_for(configured, region) == endpoint
    assert metrics.audience_for(configured) == audience


def test_missing_credentials_are_reported_per_provider(
    azure: AzureWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    from azure.identity import EnvironmentCredential

    for name in ("AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_USERNAME"):
        monkeypatch.delenv(name, raising=False)
    provider = azure.provider(credential=EnvironmentCredential())
    with pytest.raises(ProviderError, match="not authenticated"):
        provider.list_instances()


def test_the_temporary_disk_comes_from_resource_skus_and_unreadable_means_unknown(
    azure: AzureWorld,
) -> None:
    azure.fake.add_vm(SUB, "rg", "scratch", A100)
    azure.fake.temp_disk_mb[A100.lower()] = 65536
    (vm,) = azure.provider().list_instances()
    assert vm.risk.temp_disk_gb == 64
    assert "64 GB temporary disk" in vm.risk.erased_by(Action.DEALLOCATE)
    azure.fake.fail("skus.list", 403)
    (unknown,) = azure.provider().list_instances()
    assert unknown.risk.temp_disk_gb is None
    assert "could not be read" in unknown.risk.erased_by(Action.DEALLOCATE)
