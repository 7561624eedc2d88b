"""GPU utilisation, GPU memory and instance CPU from CloudWatch.

The CloudWatch agent publishes ``nvidia_smi_utilization_gpu``, ``nvidia_smi_memory_used``
and ``nvidia_smi_memory_total`` (namespace ``CWAgent``) **per GPU** with dimensions
``index``, ``name``, ``host`` plus usually ``InstanceId``. CloudWatch matches the exact
dimension set, so agent series are discovered with ``ListMetrics`` (one paginated call
per metric per region, deduplicated) and queried exactly as listed. EC2 publishes
``CPUUtilization`` (namespace ``AWS/EC2``, dimension ``InstanceId``) for every instance:
every 5 minutes with basic monitoring, so a point fills the periods of its 5 minutes.
All queries go to ``GetMetricData`` in chunks of at most 500: the number of calls grows
with ``ceil(series / 500)``, never with instances. Each query asks the ``Maximum`` (CPU:
``Average``) per period from a period-aligned start, so buckets are period starts.

Series belong to an instance by their ``InstanceId`` dimension. A series with only a
``host`` is matched when that host name is the private DNS name of exactly one instance
of all those the region listed (any state, any type); otherwise it is left out (two VPCs
can reuse a private IP, and with it the name), and a host match is said in the verdict.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from gpuplan.core.lifecycle.instances import GpuInstance, HostSamples
from gpuplan.providers.aws.metrics_settings import AwsMetrics

MAX_QUERIES = 500
_POLICY = AwsMetrics()
BASIC_MONITORING_SECONDS = 300


class Signal(StrEnum):
    UTILISATION = "utilisation"
    MEMORY_USED = "memory_used"
    MEMORY_TOTAL = "memory_total"
    CPU = "cpu"


@dataclass(frozen=True)
class MetricNames:
    """Where the signals are published (policy ``idle.metrics.aws``, whose defaults are
    these: the metric names are written once, in the policy's settings model)."""

    namespace: str = _POLICY.namespace
    utilisation: str = _POLICY.metric
    memory_used: str = _POLICY.memory_used_metric
    memory_total: str = _POLICY.memory_total_metric
    cpu_namespace: str = _POLICY.cpu_namespace
    cpu: str = _POLICY.cpu_metric


@dataclass(frozen=True)
class Series:
    instance_id: str
    gpu: str
    metric: dict[str, Any]
    """The metric exactly as ListMetrics returned it (or built, for EC2 CPU)."""
    signal: Signal = Signal.UTILISATION
    host_match: str | None = None


def list_series(cloudwatch: Any, namespace: str, metric: str) -> list[dict[str, Any]]:
    """Every series of ``metric``, deduplicated (ListMetrics may repeat a series)."""
    seen: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
    paginator = cloudwatch.get_paginator("list_metrics")
    for page in paginator.paginate(Namespace=namespace, MetricName=metric):
        for m in page.get("Metrics", ()):
            key = tuple(sorted((d["Name"], d["Value"]) for d in m.get("Dimensions", ())))
            seen.setdefault(key, m)
    return list(seen.values())


def match_series(
    metrics: Iterable[Mapping[str, Any]],
    instances: Sequence[GpuInstance],
    *,
    host_counts: Mapping[str, int] | None = None,
    signal: Signal = Signal.UTILISATION,
) -> list[Series]:
    """The series that belong to ``instances``, with the GPU each one measures.

    ``host_counts``: private DNS name -> how many instances the region listed with it;
    without it, series with no ``InstanceId`` are never matched.
    """
    by_id = {i.instance_id for i in instances}
    by_host: dict[str, str] = {}
    for inst in instances:
        dns = inst.attributes.get("private_dns", "")
        if dns and host_counts is not None and host_counts.get(dns) == 1:
            by_host[dns] = inst.instance_id
    out: list[Series] = []
    for m in metrics:
        dims = {d["Name"]: d["Value"] for d in m.get("Dimensions", ())}
        gpu = dims.get("index") or dims.get("name") or "0"
        if "InstanceId" in dims:
            if dims["InstanceId"] in by_id:
                out.append(Series(dims["InstanceId"], gpu, dict(m), signal))
            continue
        host = dims.get("host", "")
        owner = by_host.get(host)
        if owner is not None:
            out.append(Series(owner, gpu, dict(m), signal, host_match=host))
    return out


def cpu_series(instances: Sequence[GpuInstance], names: MetricNames) -> list[Series]:
    """EC2's own CPU metric of each instance (no discovery needed: one fixed dimension)."""
    return [
        Series(
            i.instance_id,
            "cpu",
            {
                "Namespace": names.cpu_namespace,
                "MetricName": names.cpu,
                "Dimensions": [{"Name": "InstanceId", "Value": i.instance_id}],
            },
            Signal.CPU,
        )
        for i in instances
    ]


def read_all(
    cloudwatch: Any,
    instances: Sequence[GpuInstance],
    names: MetricNames,
    *,
    start: datetime,
    end: datetime,
    period_minutes: int,
    host_counts: Mapping[str, int] | None,
) -> dict[str, HostSamples]:
    """Every signal of ``instances``: 3 ListMetrics + ceil(series / 500) GetMetricData."""
    series: list[Series] = []
    for signal, metric in (
        (Signal.UTILISATION, names.utilisation),
        (Signal.MEMORY_USED, names.memory_used),
        (Signal.MEMORY_TOTAL, names.memory_total),
    ):
        found = list_series(cloudwatch, names.namespace, metric)
        series += match_series(found, instances, host_counts=host_counts, signal=signal)
    series += cpu_series(instances, names)
    raw = fetch(cloudwatch, series, start=start, end=end, period_minutes=period_minutes)
    hosts = {s.instance_id: s.host_match for s in series if s.host_match}
    return {
        iid: _assemble(raw.get(iid, {}), hosts.get(iid), period_minutes, len(host_counts or {}))
        for iid in {s.instance_id for s in series if s.signal is Signal.UTILISATION}
    }


Raw = dict[Signal, dict[str, dict[datetime, float]]]


def _assemble(raw: Raw, host: str | None, period_minutes: int, listed: int) -> HostSamples:
    used = raw.get(Signal.MEMORY_USED, {})
    total = raw.get(Signal.MEMORY_TOTAL, {})
    memory: dict[str, dict[datetime, float]] = {}
    for gpu, points in used.items():
        for t, value in points.items():
            whole = total.get(gpu, {}).get(t) or max(total.get(gpu, {}).values(), default=0)
            if whole > 0:
                memory.setdefault(gpu, {})[t] = min(100.0, 100.0 * value / whole)
    cpu = _spread(raw.get(Signal.CPU, {}).get("cpu", {}), period_minutes)
    note = None
    if host:
        note = f"series matched by host name {host} (unique among {listed} listed instances)"
    return HostSamples(
        utilisation=raw.get(Signal.UTILISATION, {}), memory=memory, cpu=cpu, matched_by=note
    )


def _spread(points: Mapping[datetime, float], period_minutes: int) -> dict[datetime, float]:
    """5-minute CPU points (basic monitoring) fill every period of their 5 minutes."""
    out = dict(points)
    step = timedelta(minutes=period_minutes)
    for t, value in points.items():
        at = t + step
        while at < t + timedelta(seconds=BASIC_MONITORING_SECONDS):
            out.setdefault(at, value)
            at += step
    return out


def chunk_count(series: int) -> int:
    return math.ceil(series / MAX_QUERIES)


def fetch(
    cloudwatch: Any,
    series: Sequence[Series],
    *,
    start: datetime,
    end: datetime,
    period_minutes: int,
) -> dict[str, Raw]:
    """Instance -> signal -> GPU -> period start -> value, in chunks of <= 500 queries."""
    period = period_minutes * 60
    out: dict[str, Raw] = defaultdict(dict)
    for first in range(0, len(series), MAX_QUERIES):
        chunk = series[first : first + MAX_QUERIES]
        queries = [
            {
                "Id": f"q{first + n}",
                "MetricStat": {
                    "Metric": s.metric,
                    "Period": period,
                    "Stat": "Average" if s.signal is Signal.CPU else "Maximum",
                },
                "ReturnData": True,
            }
            for n, s in enumerate(chunk)
        ]
        owners = {f"q{first + n}": s for n, s in enumerate(chunk)}
        for result in _results(cloudwatch, queries, start, end):
            s = owners[result["Id"]]
            points = out[s.instance_id].setdefault(s.signal, {}).setdefault(s.gpu, {})
            for stamp, value in zip(result["Timestamps"], result["Values"], strict=True):
                bucket = _floor(stamp, period)
                points[bucket] = max(value, points.get(bucket, value))
    return dict(out)


def _results(
    cloudwatch: Any, queries: list[dict[str, Any]], start: datetime, end: datetime
) -> Iterable[dict[str, Any]]:
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {
            "MetricDataQueries": queries,
            "StartTime": start,
            "EndTime": end,
            "ScanBy": "TimestampAscending",
        }
        if token:
            kwargs["NextToken"] = token
        page = cloudwatch.get_metric_data(**kwargs)
        yield from page.get("MetricDataResults", ())
        token = page.get("NextToken")
        if not token:
            return


def _floor(stamp: datetime, period_seconds: int) -> datetime:
    seconds = math.floor(stamp.timestamp() / period_seconds) * period_seconds
    return datetime.fromtimestamp(seconds, tz=UTC)
