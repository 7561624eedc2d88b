"""GPU utilisation from CloudWatch, as the CloudWatch agent publishes it.

The agent publishes ``nvidia_smi_utilization_gpu`` (namespace ``CWAgent``) **per GPU**
with dimensions ``index``, ``name``, ``host`` plus usually ``InstanceId``. CloudWatch
matches the exact dimension set, so series are discovered with ``ListMetrics`` (one
paginated call per region, deduplicated) and queried exactly as listed, with
``GetMetricData`` in chunks of at most 500 queries: the number of calls grows with
``ceil(series / 500)``, never with instances. Each query asks the ``Maximum`` per
period from a period-aligned start, so buckets are period starts.

Series without an ``InstanceId`` dimension are matched to instances by ``host``
(the private DNS name, long or short form).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from gpuplan.core.fleet import GpuInstance

MAX_QUERIES = 500
Series = tuple[str, str, dict[str, Any]]
"""(instance id, GPU key, the metric exactly as ListMetrics returned it)."""


def discover(cloudwatch: Any, namespace: str, metric: str) -> list[dict[str, Any]]:
    """Every series of ``metric``, deduplicated (ListMetrics may repeat a series)."""
    seen: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
    paginator = cloudwatch.get_paginator("list_metrics")
    for page in paginator.paginate(Namespace=namespace, MetricName=metric):
        for m in page.get("Metrics", ()):
            key = tuple(sorted((d["Name"], d["Value"]) for d in m.get("Dimensions", ())))
            seen.setdefault(key, m)
    return list(seen.values())


def match_series(
    metrics: Iterable[Mapping[str, Any]], instances: Sequence[GpuInstance]
) -> list[Series]:
    """The series that belong to ``instances``, with the GPU each one measures."""
    by_id = {i.instance_id: i.instance_id for i in instances}
    by_host: dict[str, str] = {}
    for inst in instances:
        dns = inst.attributes.get("private_dns", "")
        if dns:
            by_host[dns] = inst.instance_id
            by_host[dns.split(".")[0]] = inst.instance_id
    out: list[Series] = []
    for m in metrics:
        dims = {d["Name"]: d["Value"] for d in m.get("Dimensions", ())}
        owner = by_id.get(dims.get("InstanceId", "")) or by_host.get(dims.get("host", ""))
        if owner is None:
            continue
        gpu = dims.get("index") or dims.get("name") or "0"
        out.append((owner, gpu, dict(m)))
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
) -> dict[str, dict[str, dict[datetime, float]]]:
    """Instance -> GPU -> period start -> Maximum, in chunks of <= 500 queries."""
    period = period_minutes * 60
    out: dict[str, dict[str, dict[datetime, float]]] = defaultdict(dict)
    for first in range(0, len(series), MAX_QUERIES):
        chunk = series[first : first + MAX_QUERIES]
        queries = [
            {
                "Id": f"q{first + n}",
                "MetricStat": {"Metric": metric, "Period": period, "Stat": "Maximum"},
                "ReturnData": True,
            }
            for n, (_, _, metric) in enumerate(chunk)
        ]
        owners = {f"q{first + n}": (iid, gpu) for n, (iid, gpu, _) in enumerate(chunk)}
        for result in _results(cloudwatch, queries, start, end):
            iid, gpu = owners[result["Id"]]
            points = out[iid].setdefault(gpu, {})
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
