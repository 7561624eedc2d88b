"""Prometheus (dcgm-exporter) as the utilisation source, against a local API fake."""

from __future__ import annotations

from datetime import timedelta

import pytest

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.instances import GpuInstance, InstanceState
from gpuplan.providers.base import ProviderError
from gpuplan.providers.prometheus import PrometheusSource, build_query
from tests.fakes.scenarios import (
    CASES,
    LONG_WINDOW,
    LOOKBACK,
    NOW,
    PERIODS,
    RULE,
    SIGNAL_CASES,
    WINDOW,
    Case,
    samples_of,
    signal_reason,
    verdict,
)
from tests.providers.prometheus.conftest import PromWorld


def _instance(case: Case, iid: str, provider: Provider = Provider.AWS) -> GpuInstance:
    return GpuInstance(
        provider=provider,
        account="acct",
        region="us-east-1",
        instance_id=iid,
        name=case.name,
        instance_type="p5.48xlarge" if case.gpus == 8 else "g5.xlarge",
        state=InstanceState.RUNNING if case.running else InstanceState.STOPPED,
        started_at=case.started,
        labels=dict(case.labels),
        gpu_count=case.gpus,
        managed_by="Auto Scaling group asg" if case.managed else None,
    )


def _publish(
    prom: PromWorld, case: Case, key: str, metric: str = "DCGM_FI_DEV_GPU_UTIL", scale: float = 1.0
) -> None:
    for gpu, at, value in samples_of(case):
        labels = {
            "__name__": metric,
            "instance_id": key,
            "gpu": str(gpu),
            "UUID": f"GPU-{key}-{gpu}",
            "Hostname": key,
            "instance": f"{key}:9400",
        }
        prom.fake.publish(labels, at, value * scale)


def test_scenario_table_gives_the_same_verdicts_in_one_query(prom: PromWorld) -> None:
    instances = []
    for n, case in enumerate(CASES):
        iid = f"i-{n:017x}"
        _publish(prom, case, iid)
        instances.append(_instance(case, iid))
    source = PrometheusSource(prom.url)
    samples = source.fetch_utilisation(
        instances, start=WINDOW[0], end=WINDOW[1], period_minutes=RULE.period_minutes
    )
    got = {i.name: verdict(i, samples.get(i.instance_id)) for i in instances}
    assert got == {case.name: case.verdict for case in CASES}
    assert prom.fake.calls["query_range"] == 4  # utilisation, memory used and free, CPU


def test_periods_are_filed_under_their_start(prom: PromWorld) -> None:
    case = Case("idle", "idle")
    _publish(prom, case, "i-1")
    samples = PrometheusSource(prom.url).fetch_utilisation(
        [_instance(case, "i-1")], start=WINDOW[0], end=WINDOW[1], period_minutes=5
    )
    assert samples["i-1"].utilisation == {"0": {begin: 1.0 for begin in PERIODS}}


def test_profiling_fields_are_ratios_scaled_to_percent(prom: PromWorld) -> None:
    case = Case("idle", "idle")
    _publish(prom, case, "i-1", metric="DCGM_FI_PROF_GR_ENGINE_ACTIVE", scale=0.01)
    samples = PrometheusSource(prom.url, metric="DCGM_FI_PROF_GR_ENGINE_ACTIVE").fetch_utilisation(
        [_instance(case, "i-1")], start=WINDOW[0], end=WINDOW[1], period_minutes=5
    )
    values = list(samples["i-1"].utilisation["0"].values())
    assert len(values) == len(PERIODS)
    assert values == pytest.approx([1.0] * len(PERIODS))


def test_the_label_may_carry_the_azure_vm_id_but_never_the_name(prom: PromWorld) -> None:
    case = Case("idle", "idle")
    rid = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm.1"
    vm = _instance(case, rid, Provider.AZURE).model_copy(
        update={"name": "vm.1", "attributes": {"vm_id": "ABCD-1234"}}
    )
    _publish(prom, case, "abcd-1234")
    samples = PrometheusSource(prom.url).fetch_utilisation(
        [vm], start=WINDOW[0], end=WINDOW[1], period_minutes=5
    )
    assert set(samples) == {rid}
    by_name = vm.model_copy(update={"attributes": {}})
    prom.fake.series.clear()
    _publish(prom, case, "vm.1")  # a name: another scope may have a vm.1 too
    samples = PrometheusSource(prom.url).fetch_utilisation(
        [by_name], start=WINDOW[0], end=WINDOW[1], period_minutes=5
    )
    assert samples == {}
    assert "\\\\." in prom.fake.queries[-1]  # the resource id's dots are escaped


def test_transient_errors_are_retried_then_reported(prom: PromWorld) -> None:
    case = Case("idle", "idle")
    _publish(prom, case, "i-1")
    prom.fake.fail("query_range", 503, 429)
    source = PrometheusSource(prom.url, backoff_s=0.01)
    samples = source.fetch_utilisation(
        [_instance(case, "i-1")], start=WINDOW[0], end=WINDOW[1], period_minutes=5
    )
    assert len(samples["i-1"].utilisation["0"]) == len(PERIODS)
    assert prom.fake.calls["query_range"] == 6  # 2 retried, then 4 queries
    prom.fake.fail("query_range", 503, 503, 503, 503)
    with pytest.raises(ProviderError, match="HTTP 503"):
        source.fetch_utilisation(
            [_instance(case, "i-1")], start=WINDOW[0], end=WINDOW[1], period_minutes=5
        )


def test_a_bad_query_is_not_retried(prom: PromWorld) -> None:
    source = PrometheusSource(prom.url, metric="DCGM_FI_DEV_GPU_UTIL", instance_label="bad-label")
    with pytest.raises(ProviderError, match="HTTP 400"):
        source.fetch_utilisation(
            [_instance(Case("idle", "idle"), "i-1")],
            start=WINDOW[0],
            end=WINDOW[1],
            period_minutes=5,
        )
    assert prom.fake.calls["query_range"] == 1


def test_an_unreachable_prometheus_is_a_provider_error() -> None:
    source = PrometheusSource("http://127.0.0.1:9", attempts=2, backoff_s=0.01)
    with pytest.raises(ProviderError, match="query_range failed"):
        source.fetch_utilisation(
            [_instance(Case("idle", "idle"), "i-1")],
            start=WINDOW[0],
            end=WINDOW[1],
            period_minutes=5,
        )


def test_query_shape() -> None:
    query = build_query("DCGM_FI_DEV_GPU_UTIL", "instance_id", ["b", "a"], 5)
    assert query == (
        "max by (instance_id, gpu) "
        '(max_over_time(DCGM_FI_DEV_GPU_UTIL{instance_id=~"(?i)(a|b)"}[5m]))'
    )


def test_no_instances_no_call(prom: PromWorld) -> None:
    assert (
        PrometheusSource(prom.url).fetch_utilisation(
            [], start=WINDOW[0], end=WINDOW[0] + timedelta(minutes=5), period_minutes=5
        )
        == {}
    )
    assert prom.fake.calls["query_range"] == 0


def test_memory_and_cpu_decide(prom: PromWorld) -> None:
    total = 81559.0
    instances = []
    for n, case in enumerate(SIGNAL_CASES):
        iid = f"i-{n:017x}"
        for k, begin in enumerate(LOOKBACK):
            at = begin + timedelta(seconds=30)
            base = {"instance_id": iid, "gpu": "0", "Hostname": "h", "instance": "h:9400"}
            prom.fake.publish({**base, "__name__": "DCGM_FI_DEV_GPU_UTIL"}, at, case.utilisation(k))
            used = total * case.memory_percent / 100
            prom.fake.publish({**base, "__name__": "DCGM_FI_DEV_FB_USED"}, at, used)
            prom.fake.publish({**base, "__name__": "DCGM_FI_DEV_FB_FREE"}, at, total - used)
        idle_seconds = 0.0
        for minute in range(-5, 181):  # node_exporter: an idle-seconds counter per core
            idle_seconds += 60 * (1 - case.cpu_percent / 100)
            at = LOOKBACK[0] + timedelta(minutes=minute, seconds=15)
            for core in ("0", "1"):
                labels = {"__name__": "node_cpu_seconds_total", "instance_id": iid,
                          "cpu": core, "mode": "idle"}  # fmt: skip
                prom.fake.publish(labels, at, idle_seconds)
        instances.append(
            _instance(Case(case.name, case.verdict), iid).model_copy(
                update={"started_at": NOW - timedelta(days=1)}
            )
        )
    source = PrometheusSource(prom.url)
    samples = source.fetch_utilisation(
        instances, start=LONG_WINDOW[0], end=LONG_WINDOW[1], period_minutes=5
    )
    assert prom.fake.calls["query_range"] == 4
    for inst in instances:
        case = next(c for c in SIGNAL_CASES if c.name == inst.name)
        verdict_, reason = signal_reason(inst, samples.get(inst.instance_id))
        assert verdict_ == case.verdict, (case.name, reason)
        assert case.reason in reason, (case.name, reason)
