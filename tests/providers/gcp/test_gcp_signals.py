"""GCP through the gRPC Monitoring fake: GPU memory (Ops Agent, used/free) and instance CPU
(a fraction) reach the idle decision, in three paged requests per project."""

from __future__ import annotations

from datetime import timedelta

from gpuplan.core.lifecycle.instances import HostSamples
from gpuplan.providers.gcp.monitoring import DEFAULT_CPU, DEFAULT_MEMORY
from tests.fakes.gcp_world import PROJECT, GcpWorld
from tests.fakes.scenarios import LONG_WINDOW, LOOKBACK, SIGNAL_CASES, signal_reason

TOTAL_BYTES = 80e9


def test_memory_and_cpu_decide(gcp: GcpWorld) -> None:
    ids = {}
    for case in SIGNAL_CASES:
        iid = gcp.compute.add(
            PROJECT, "us-central1-a", case.name, "a2-highgpu-1g",
            labels={"team": "research"}, lastStartTimestamp="2026-12-01T10:00:00+00:00",
        )  # fmt: skip
        ids[case.name] = iid
        for k, begin in enumerate(LOOKBACK):
            at = begin + timedelta(seconds=40)
            gcp.publish(iid, 0, at, case.utilisation(k))
            used = TOTAL_BYTES * case.memory_percent / 100
            gcp.publish(iid, 0, at, used, metric_type=DEFAULT_MEMORY, memory_state="used")
            free = TOTAL_BYTES - used
            gcp.publish(iid, 0, at, free, metric_type=DEFAULT_MEMORY, memory_state="free")
            gcp.publish(iid, 0, at, case.cpu_percent / 100, metric_type=DEFAULT_CPU)
    provider = gcp.provider()
    instances = provider.list_instances()
    samples = provider.fetch_utilisation(
        instances, start=LONG_WINDOW[0], end=LONG_WINDOW[1], period_minutes=5
    )
    assert gcp.monitoring.calls["ListTimeSeries"] == 3
    loaded = samples[ids["model-loaded"]]
    assert isinstance(loaded, HostSamples)
    assert round(max(loaded.memory["0"].values()), 1) == 60.0
    assert round(max(loaded.cpu.values()), 1) == 2.0
    for inst in instances:
        case = next(c for c in SIGNAL_CASES if c.name == inst.name)
        verdict, reason = signal_reason(inst, samples.get(inst.instance_id))
        assert verdict == case.verdict, (case.name, reason)
        assert case.reason in reason, (case.name, reason)
