"""GPU utilisation from Cloud Monitoring: one ``ListTimeSeries`` per project per run.

The request aligns every series with ``ALIGN_MAX`` per period and reduces with
``REDUCE_MAX`` grouped by ``resource.labels.instance_id`` **and**
``metric.labels.gpu_number``. Grouping by the instance alone would hand back the busiest
GPU per period, but then a period where one of eight GPUs stopped reporting would look
covered; the idle rule needs to know that every GPU reported. Keeping the GPU number
in the grouping costs nothing in calls (the answer grows by series, paged), folds the
agent's other labels (``uuid``, ``model``) away, and leaves "busiest GPU per period" to
the core, the same way for every cloud.

Cloud Monitoring stamps an aligned point with the *end* of its alignment period; the
period start is that end minus the period. DCGM metrics in Cloud Monitoring are ratios
(0..1) and are scaled to percent.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from google.api_core.retry import Retry
    from google.cloud import monitoring_v3
    from google.cloud.monitoring_v3 import MetricServiceClient

DEFAULT_METRIC = "agent.googleapis.com/gpu/utilization"
# Metrics reported as a fraction of time (0..1) rather than percent (Ops Agent DCGM).
RATIO_PREFIXES = ("workload.googleapis.com/gpu.dcgm.", "workload.googleapis.com/dcgm.")
GROUP_BY = ("resource.labels.instance_id", "metric.labels.gpu_number")
PAGE_SIZE = 10_000

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
) -> monitoring_v3.ListTimeSeriesRequest:
    """Max per period per series, then max per (instance, GPU) across the rest."""
    from google.cloud import monitoring_v3

    aggregation = monitoring_v3.Aggregation(
        alignment_period=timedelta(minutes=period_minutes),
        per_series_aligner=monitoring_v3.Aggregation.Aligner.ALIGN_MAX,
        cross_series_reducer=monitoring_v3.Aggregation.Reducer.REDUCE_MAX,
        group_by_fields=list(GROUP_BY),
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
) -> Samples:
    """instance id -> GPU number -> period start -> max percent, for ``instance_ids``."""
    request = build_request(
        project=project,
        metric_type=metric_type,
        start=start,
        end=end,
        period_minutes=period_minutes,
        page_size=page_size,
    )
    scale = 100.0 if metric_type.startswith(RATIO_PREFIXES) else 1.0
    period = timedelta(minutes=period_minutes)
    out: Samples = {}
    for series in client.list_time_series(request=request, retry=retry):
        instance_id = series.resource.labels.get("instance_id", "")
        if instance_id not in instance_ids:
            continue
        gpu = series.metric.labels.get("gpu_number", "0")
        points = out.setdefault(instance_id, {}).setdefault(gpu, {})
        for point in series.points:
            ended = datetime.fromtimestamp(point.interval.end_time.timestamp(), tz=UTC)
            value = point.value
            number = value.double_value if "double_value" in value else float(value.int64_value)
            begin = ended - period
            points[begin] = max(points.get(begin, 0.0), number * scale)
    return out
