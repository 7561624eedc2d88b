"""Azure through the TLS fake: Telegraf GPU memory (used/total, MiB) and the platform
metric ``Percentage CPU`` reach the idle decision, two batch calls per 50 VMs."""

from __future__ import annotations

from datetime import timedelta

from gpuplan.core.lifecycle.instances import HostSamples
from gpuplan.providers.azure.metrics import PLATFORM_NAMESPACE
from tests.fakes.azure_world import SUB, AzureWorld
from tests.fakes.scenarios import LONG_WINDOW, LOOKBACK, NOW, SIGNAL_CASES, signal_reason

TOTAL_MIB = 81559.0


def test_memory_and_cpu_decide(azure: AzureWorld) -> None:
    ids = {}
    for case in SIGNAL_CASES:
        rid = azure.fake.add_vm(
            SUB, "rg", case.name, "Standard_NC24ads_A100_v4",
            tags={"team": "research"}, timeCreated=(NOW - timedelta(days=1)).isoformat(),
        )  # fmt: skip
        ids[case.name] = rid
        for k, begin in enumerate(LOOKBACK):
            at = begin + timedelta(seconds=30)
            azure.fake.publish(rid, 0, at, case.utilisation(k))
            used = TOTAL_MIB * case.memory_percent / 100
            azure.fake.publish(rid, 0, at, used, metric="memory_used")
            azure.fake.publish(rid, 0, at, TOTAL_MIB, metric="memory_total")
            azure.fake.publish(
                rid, 0, at, case.cpu_percent, namespace=PLATFORM_NAMESPACE, metric="Percentage CPU"
            )
    provider = azure.provider()
    instances = provider.list_instances()
    samples = provider.fetch_utilisation(
        instances, start=LONG_WINDOW[0], end=LONG_WINDOW[1], period_minutes=5
    )
    assert azure.fake.calls["metrics.getBatch"] == 2
    loaded = samples[ids["model-loaded"]]
    assert isinstance(loaded, HostSamples)
    assert round(max(loaded.memory["0"].values()), 1) == 60.0
    assert max(loaded.cpu.values()) == 2.0
    for inst in instances:
        case = next(c for c in SIGNAL_CASES if c.name == inst.name)
        verdict, reason = signal_reason(inst, samples.get(inst.instance_id))
        assert verdict == case.verdict, (case.name, reason)
        assert case.reason in reason, (case.name, reason)
