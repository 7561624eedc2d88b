"""The GCP adapter against wire fakes: listing, utilisation, actions, faults."""

from __future__ import annotations

import math
from datetime import timedelta

import grpc
import pytest
from google.cloud import monitoring_v3

from gpuplan.core.catalog.offers import PricingModel
from gpuplan.core.lifecycle.instances import Action, Capability, InstanceState
from gpuplan.providers.base import CloudAdapter, ProviderError
from gpuplan.providers.gcp.machines import family_gpus
from tests.fakes.gcp_world import PROJECT, GcpWorld
from tests.fakes.scenarios import CASES, PERIODS, RULE, WINDOW, verdict


def test_scenario_table_gives_the_same_verdicts_as_aws(gcp: GcpWorld) -> None:
    for case in CASES:
        gcp.build(case)
    provider = gcp.provider()
    instances = provider.list_instances()
    samples = provider.fetch_utilisation(
        instances, start=WINDOW[0], end=WINDOW[1], period_minutes=RULE.period_minutes
    )
    got = {i.name: verdict(i, samples.get(i.instance_id)) for i in instances}
    assert got == {case.name: case.verdict for case in CASES}
    assert gcp.monitoring.calls["ListTimeSeries"] == 3  # utilisation, GPU memory, CPU


def test_the_adapter_satisfies_the_protocol(gcp: GcpWorld) -> None:
    provider = gcp.provider()
    assert isinstance(provider, CloudAdapter)
    assert Capability.SUSPEND in provider.capabilities
    assert Capability.HIBERNATE not in provider.capabilities


def test_listing_pages_keeps_gpu_machines_and_maps_them(gcp: GcpWorld) -> None:
    for i in range(5):
        gcp.compute.add(PROJECT, "us-central1-a", f"a2-{i}", "a2-highgpu-1g")
    gcp.compute.add(PROJECT, "us-central1-b", "cpu-only", "n2-standard-8")
    gcp.compute.add(
        PROJECT,
        "us-central1-b",
        "n1-t4",
        "n1-standard-8",
        guestAccelerators=[
            {
                "acceleratorType": "projects/p/zones/z/acceleratorTypes/nvidia-tesla-t4",
                "acceleratorCount": 2,
            }
        ],
        scheduling={"preemptible": True},
        disks=[{"type": "PERSISTENT", "boot": True}, {"type": "SCRATCH"}, {"type": "SCRATCH"}],
    )
    gcp.compute.add(PROJECT, "us-central1-c", "g2", "g2-standard-24", status="SUSPENDED")
    instances = gcp.provider(page_size=3).list_instances()
    assert gcp.compute.calls["aggregatedList"] == math.ceil(8 / 3)
    by_name = {i.name: i for i in instances}
    assert set(by_name) == {"a2-0", "a2-1", "a2-2", "a2-3", "a2-4", "n1-t4", "g2"}
    t4 = by_name["n1-t4"]
    assert (t4.gpu, t4.gpu_count, t4.pricing) == ("T4", 2, PricingModel.SPOT)
    assert t4.risk.local_ssd_count == 2
    assert by_name["g2"].state is InstanceState.SUSPENDED
    assert (by_name["g2"].gpu, by_name["g2"].gpu_count) == ("L4", 2)
    a2 = by_name["a2-0"]
    assert (a2.gpu, a2.region, a2.zone, a2.account) == (
        "A100-40GB",
        "us-central1",
        "us-central1-a",
        PROJECT,
    )
    assert a2.hourly_usd is not None and a2.hourly_usd > 3
    assert a2.started_at is not None and a2.started_at.utcoffset() == timedelta(0)


def test_zones_in_scope_filter_the_listing(gcp: GcpWorld) -> None:
    gcp.compute.add(PROJECT, "us-central1-a", "kept", "a2-highgpu-1g")
    gcp.compute.add(PROJECT, "us-east1-b", "dropped", "a2-highgpu-1g")
    names = [i.name for i in gcp.provider(zones=["us-central1-a"]).list_instances()]
    assert names == ["kept"]


@pytest.mark.parametrize(
    ("machine", "gpu", "count"),
    [
        ("a2-megagpu-16g", "A100-40GB", 16),
        ("a2-ultragpu-4g", "A100-80GB", 4),
        ("a3-megagpu-8g", "H100", 8),
        ("a3-ultragpu-8g", "H200", 8),
        ("a4-highgpu-8g", "B200", 8),
        ("g2-standard-96", "L4", 8),
        ("n2-standard-4", None, 0),
    ],
)
def test_fixed_gpu_families_are_read_from_the_machine_type(
    machine: str, gpu: str | None, count: int
) -> None:
    facts = family_gpus(machine)
    assert (facts.gpu, facts.gpu_count) == (gpu, count)


def test_group_members_and_gke_nodes_are_managed(gcp: GcpWorld) -> None:
    gcp.compute.add(
        PROJECT,
        "us-central1-a",
        "gke-node",
        "g2-standard-8",
        labels={"goog-gke-node": ""},
        metadata={
            "items": [
                {
                    "key": "created-by",
                    "value": "projects/1/zones/us-central1-a/instanceGroupManagers/gke-pool-grp",
                }
            ]
        },
    )
    (node,) = gcp.provider().list_instances()
    assert node.managed_by is not None and "GKE node pool" in node.managed_by


def test_stop_waits_for_the_zone_operation_on_the_configured_endpoint(gcp: GcpWorld) -> None:
    gcp.compute.add(PROJECT, "us-central1-a", "vm", "a2-highgpu-1g")
    gcp.compute.polls_until_done = 3
    provider = gcp.provider()
    (vm,) = provider.list_instances()
    assert provider.act(vm, Action.STOP) is InstanceState.STOPPED
    assert gcp.compute.status(PROJECT, "vm") == "TERMINATED"
    assert gcp.compute.calls["operations.get"] == 3
    assert provider.refresh(vm).state is InstanceState.STOPPED


def test_suspend_and_hibernate_mean_suspend(gcp: GcpWorld) -> None:
    gcp.compute.add(PROJECT, "us-central1-a", "vm", "a2-highgpu-1g")
    provider = gcp.provider()
    (vm,) = provider.list_instances()
    assert provider.act(vm, Action.SUSPEND) is InstanceState.SUSPENDED
    assert gcp.compute.status(PROJECT, "vm") == "SUSPENDED"
    assert gcp.compute.calls["suspend"] == 1 and gcp.compute.calls["stop"] == 0


def test_local_ssd_instances_are_stopped_only_with_discard_said_out_loud(gcp: GcpWorld) -> None:
    gcp.compute.add(PROJECT, "us-central1-a", "ssd", "a2-highgpu-1g", disks=[{"type": "SCRATCH"}])
    provider = gcp.provider()
    (vm,) = provider.list_instances()
    provider.act(vm, Action.STOP)
    assert gcp.compute.instances[(PROJECT, "ssd")]["_discarded_local_ssd"] == "true"


def test_terminate_deletes(gcp: GcpWorld) -> None:
    gcp.compute.add(PROJECT, "us-central1-a", "vm", "a2-highgpu-1g")
    provider = gcp.provider()
    (vm,) = provider.list_instances()
    assert provider.act(vm, Action.TERMINATE) is InstanceState.TERMINATED
    assert gcp.compute.status(PROJECT, "vm") is None


def test_throttling_and_5xx_are_retried(gcp: GcpWorld) -> None:
    gcp.compute.add(PROJECT, "us-central1-a", "vm", "a2-highgpu-1g")
    gcp.compute.fail("aggregatedList", 429, 500, 503)
    gcp.compute.fail("stop", 429, 503)
    gcp.compute.fail("operations.get", 502)
    provider = gcp.provider()
    (vm,) = provider.list_instances()
    provider.act(vm, Action.STOP)
    assert gcp.compute.calls["aggregatedList"] == 4
    assert gcp.compute.calls["stop"] == 3
    assert gcp.compute.status(PROJECT, "vm") == "TERMINATED"


def test_persistent_errors_become_one_readable_provider_error(gcp: GcpWorld) -> None:
    gcp.compute.add(PROJECT, "us-central1-a", "vm", "a2-highgpu-1g")
    gcp.compute.fail("aggregatedList", *[503] * 200)
    with pytest.raises(ProviderError, match=r"gcp research-proj: listing instances: gave up"):
        gcp.provider(retry_timeout_s=0.2).list_instances()


def test_a_500_on_stop_is_not_retried(gcp: GcpWorld) -> None:
    gcp.compute.add(PROJECT, "us-central1-a", "vm", "a2-highgpu-1g")
    provider = gcp.provider()
    (vm,) = provider.list_instances()
    gcp.compute.fail("stop", 500)
    with pytest.raises(ProviderError, match="stop vm: 500"):
        provider.act(vm, Action.STOP)
    assert gcp.compute.calls["stop"] == 1


def test_an_instance_deleted_between_plan_and_act_is_reported(gcp: GcpWorld) -> None:
    gcp.compute.add(PROJECT, "us-central1-a", "gone", "a2-highgpu-1g")
    provider = gcp.provider()
    (vm,) = provider.list_instances()
    del gcp.compute.instances[(PROJECT, "gone")]
    with pytest.raises(ProviderError, match="not found"):
        provider.refresh(vm)
    with pytest.raises(ProviderError, match="stop gone: not found"):
        provider.act(vm, Action.STOP)


def test_labels_use_the_fingerprint_and_survive_a_concurrent_change(gcp: GcpWorld) -> None:
    gcp.compute.add(PROJECT, "us-central1-a", "vm", "a2-highgpu-1g", labels={"team": "research"})
    provider = gcp.provider()
    (vm,) = provider.list_instances()
    gcp.compute.fail("setLabels", 412)
    provider.tag(vm, {"gpuplan-stopped-at": "20261202t101500z"})
    assert gcp.compute.instances[(PROJECT, "vm")]["labels"] == {
        "team": "research",
        "gpuplan-stopped-at": "20261202t101500z",
    }
    assert gcp.compute.calls["setLabels"] == 2
    provider.untag(vm, ["team", "absent"])
    assert gcp.compute.instances[(PROJECT, "vm")]["labels"] == {
        "gpuplan-stopped-at": "20261202t101500z"
    }
    provider.untag(vm, ["absent"])
    assert gcp.compute.calls["setLabels"] == 3


def test_utilisation_is_one_paged_query_per_project_grouped_per_gpu(gcp: GcpWorld) -> None:
    ids = [gcp.compute.add(PROJECT, "us-central1-a", f"vm{i}", "a2-highgpu-2g") for i in range(6)]
    for iid in ids:
        for gpu in range(2):
            for begin in PERIODS:
                gcp.publish(iid, gpu, begin + timedelta(seconds=30), 3.0 + gpu)
    gcp.publish("999", 0, PERIODS[0] + timedelta(seconds=30), 99.0)  # not in scope
    provider = gcp.provider(metrics_page_size=30)
    instances = provider.list_instances()
    samples = provider.fetch_utilisation(
        instances, start=WINDOW[0], end=WINDOW[1], period_minutes=5
    )
    # A FULL page holds at most page_size points (a series may continue on the next page).
    points = 12 * len(PERIODS) + 1
    assert gcp.monitoring.calls["ListTimeSeries"] == math.ceil(points / 30) + 2  # memory, CPU
    assert set(samples) == set(ids)
    assert samples[ids[0]].utilisation["1"] == {begin: 4.0 for begin in PERIODS}
    request = gcp.monitoring.requests[0]
    agg = request.aggregation
    assert agg.per_series_aligner == monitoring_v3.Aggregation.Aligner.ALIGN_MAX
    assert agg.cross_series_reducer == monitoring_v3.Aggregation.Reducer.REDUCE_MAX
    assert list(agg.group_by_fields) == ["resource.labels.instance_id", "metric.labels.gpu_number"]
    assert 'metric.type = "agent.googleapis.com/gpu/utilization"' in request.filter


def test_dcgm_ratio_metrics_are_scaled_to_percent(gcp: GcpWorld) -> None:
    metric = "workload.googleapis.com/gpu.dcgm.utilization"
    iid = gcp.compute.add(PROJECT, "us-central1-a", "vm", "a2-highgpu-1g")
    gcp.publish(iid, 0, PERIODS[-1] + timedelta(seconds=10), 0.25, metric_type=metric)
    provider = gcp.provider(metric_type=metric)
    samples = provider.fetch_utilisation(
        provider.list_instances(), start=WINDOW[0], end=WINDOW[1], period_minutes=5
    )
    assert samples[iid].utilisation["0"] == {PERIODS[-1]: 25.0}


def test_monitoring_unavailable_is_retried_then_reported(gcp: GcpWorld) -> None:
    iid = gcp.compute.add(PROJECT, "us-central1-a", "vm", "a2-highgpu-1g")
    gcp.publish(iid, 0, PERIODS[-1] + timedelta(seconds=10), 1.0)
    gcp.monitoring.faults.extend([grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED])
    provider = gcp.provider()
    instances = provider.list_instances()
    samples = provider.fetch_utilisation(
        instances, start=WINDOW[0], end=WINDOW[1], period_minutes=5
    )
    assert samples[iid].utilisation["0"] == {PERIODS[-1]: 1.0}
    assert gcp.monitoring.calls["ListTimeSeries"] == 5  # 2 retried, then 3 signals
    gcp.monitoring.faults.append(grpc.StatusCode.PERMISSION_DENIED)
    with pytest.raises(ProviderError, match="403"):
        provider.fetch_utilisation(instances, start=WINDOW[0], end=WINDOW[1], period_minutes=5)


def test_missing_credentials_are_a_provider_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    from gpuplan.providers.gcp.provider import GcpAdapter

    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path))
    monkeypatch.setenv("NO_GCE_CHECK", "True")
    with pytest.raises(ProviderError, match="no Application Default Credentials"):
        GcpAdapter(PROJECT)
