"""GPU utilisation from Cloud Monitoring: one ``ListTimeSeries`` per project per run.

The request aligns every series with ``ALIGN_MAX`` per period and reduces with
``REDUCE_MAX`` grouped by ``resource.labels.instance_id`` **and**
``metric.labels.gpu_number``. Grouping by the instance alone would hand back the busiest
GPU per period, but then a period where one of eight GPUs stopped reporting would look
covered; the idle rule needs to know that every GPU reported. Keeping the GPU number
in the grouping costs nothing in calls (the answer grows by series, paged), folds the
agent's other labels (``uuid``, ``model``) away, and leaves "busiest GPU per period" to
the core, the same way for every cloud.

GPU memory (``agent.googleapis.com/gpu/memory/bytes_used``, label ``memory_state``
``used``/``free``) and instance CPU (``compute.googleapis.com/instance/cpu/utilization``,
a fraction) come from one more request each, grouped the same way: three paged
``ListTimeSeries`` per project per run, whatever the number of instances. Memory in use
is ``used / (used + free)`` per GPU and period. Series belong to an instance by the
``instance_id`` resource label only.

Cloud Monitoring stamps an aligned point with the *end* of its alignment period; the
period start is that end minus the period. DCGM metrics in Cloud Monitoring are ratios
(0..1) and are scaled to percent.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from gpuplan.core.lifecycle.instances import HostSamples
from gpuplan.providers.gcp.metrics_settings import GcpMetrics

if TYPE_CHECKING:
    from google.api_core.retry import Retry
    from google.cloud import monitoring_v3
    from google.cloud.monitoring_v3 import MetricServiceClient

_POLICY = GcpMetrics()
DEFAULT_METRIC = _POLICY.metric_type
# Metrics reported as a fraction of time (0..1) rather than percent (Ops Agent DCGM).
RATIO_PREFIXES = ("workload.googleapis.com/gpu.dcgm.", "workload.googleapis.com/dcgm.")
GROUP_BY = ("resource.labels.instance_id", "metric.labels.gpu_number")
MEMORY_GROUP_BY = (*GROUP_BY, "metric.labels.memory_state")
CPU_GROUP_BY = ("resource.labels.instance_id",)
DEFAULT_MEMORY = _POLICY.memory_used_type
DEFAULT_CPU = _POLICY.cpu_type
PAGE_SIZE = 100_000
"""Points per ListTimeSeries page: the API's maximum (fewer calls for large fleets)."""

Samples = dict[str, dict[str, dict[datetime, float]]]


def time_series_filter(metric_type: str) -> str:
    return f'metric.type = "{metric_type}" AND resource.type = "gce_instance"'


def build_request(
    *,
    project: str,
    metric_type: str,
    start: datetime,
    end: datetime,
    period_minutes: int,
    page_size: int = PAGE_SIZE,
    group_by: tuple[str, ...] = GROUP_BY,
) -> monitoring_v3.ListTimeSeriesRequest:
    """Max per period per series, then max per (instance, GPU) across the rest."""
    from google.cloud import monitoring_v3

    aggregation = monitoring_v3.Aggregation(
        alignment_period=timedelta(minutes=period_minutes),
        per_series_aligner=monitoring_v3.Aggregation.Aligner.ALIGN_MAX,
        cross_series_reducer=monitoring_v3.Aggregation.Reducer.REDUCE_MAX,
        group_by_fields=list(group_by),
    )
    return monitoring_v3.ListTimeSeriesRequest(
        name=f"projects/{project}",
        filter=time_series_filter(metric_type),
        interval=monitoring_v3.TimeInterval(start_time=start, end_time=end),
        aggregation=aggregation,
        view=monitoring_v3.ListTimeSeriesRequest.TimeSeriesView.FULL,
        page_size=page_size,
    )


def fetch_project(
    client: MetricServiceClient,
    *,
    project: str,
    metric_type: str,
    start: datetime,
    end: datetime,
    period_minutes: int,
    instance_ids: Collection[str],
    retry: Retry,
    page_size: int = PAGE_SIZE,
    group_by: tuple[str, ...] = GROUP_BY,
    scale: float | None = None,
) -> Samples:
    """instance id -> key (GPU number, memory state) -> period start -> max, for
    ``instance_ids``; ratios scaled to percent."""
    request = build_request(
        project=project,
        metric_type=metric_type,
        start=start,
        end=end,
        period_minutes=period_minutes,
        page_size=page_size,
        group_by=group_by,
    )
    if scale is None:
        scale = 100.0 if metric_type.startswith(RATIO_PREFIXES) else 1.0
    period = timedelta(minutes=period_minutes)
    out: Samples = {}
    for series in client.list_time_series(request=request, retry=retry):
        instance_id = series.resource.labels.get("instance_id", "")
        if instance_id not in instance_ids:
            continue
        key = series.metric.labels.get("gpu_number", "0")
        if "metric.labels.memory_state" in group_by:
            key += "/" + series.metric.labels.get("memory_state", "")
        points = out.setdefault(instance_id, {}).setdefault(key, {})
        for point in series.points:
            ended = datetime.fromtimestamp(point.interval.end_time.timestamp(), tz=UTC)
            value = point.value
            number = value.double_value if "double_value" in value else float(value.int64_value)
            begin = ended - period
            points[begin] = max(points.get(begin, 0.0), number * scale)
    return out


def fetch_signals(
    client: MetricServiceClient,
    *,
    project: str,
    metric_types: tuple[str, str, str],
    start: datetime,
    end: datetime,
    period_minutes: int,
    instance_ids: Collection[str],
    retry: Retry,
    page_size: int = PAGE_SIZE,
) -> dict[str, HostSamples]:
    """Utilisation, GPU memory and CPU of ``instance_ids`` (three paged requests)."""
    utilisation, memory_type, cpu_type = metric_types
    common: dict[str, Any] = {
        "project": project, "start": start, "end": end, "period_minutes": period_minutes,
        "instance_ids": instance_ids, "retry": retry, "page_size": page_size,
    }  # fmt: skip
    util = fetch_project(client, metric_type=utilisation, **common)
    memory = fetch_project(
        client, metric_type=memory_type, group_by=MEMORY_GROUP_BY, scale=1.0, **common
    )
    cpu = fetch_project(client, metric_type=cpu_type, group_by=CPU_GROUP_BY, scale=100.0, **common)
    return {
        iid: HostSamples(
            utilisation=gpus,
            memory=memory_percent(memory.get(iid, {})),
            cpu=next(iter(cpu.get(iid, {}).values()), {}),
        )
        for iid, gpus in util.items()
    }


def memory_percent(states: dict[str, dict[datetime, float]]) -> dict[str, dict[datetime, float]]:
    """``{"0/used": ..., "0/free": ...}`` -> GPU -> period -> used percent of the total."""
    out: dict[str, dict[datetime, float]] = {}
    for key, used in states.items():
        gpu, _, state = key.partition("/")
        if state != "used":
            continue
        free = states.get(f"{gpu}/free", {})
        for t, value in used.items():
            if t in free and value + free[t] > 0:
                out.setdefault(gpu, {})[t] = 100.0 * value / (value + free[t])
    return out
