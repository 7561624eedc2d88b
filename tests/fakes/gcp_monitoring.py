"""An in-process gRPC Cloud Monitoring fake: ``ListTimeSeries`` with alignment, reduction,
grouping and paging, over raw points published the way the Ops Agent publishes them
(resource ``gce_instance`` with ``instance_id`` and ``zone``; metric labels
``gpu_number``, ``model``, ``uuid``).

Alignment follows the public documentation: windows of ``alignment_period`` end at the
interval's end time and step backwards; an aligned point carries the window's end as
its timestamp. Points come newest first, as the real service sends them.

Paging follows the documented ``page_size``: with ``view=FULL`` it is the most
**points** a page holds (100,000 when unset or larger), so a long audit pages by its
datapoints, not by its series; a series that does not fit is continued on the next
page (its header repeated). With ``view=HEADERS`` it counts series.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
from google.cloud import monitoring_v3
from google.protobuf import timestamp_pb2

SERVICE = "google.monitoring.v3.MetricService"
MAX_PAGE = 100_000
"""The service's largest page (points with view=FULL, series with view=HEADERS)."""


@dataclass(frozen=True)
class RawPoint:
    project: str
    instance_id: str
    gpu: str
    at: datetime
    value: float
    metric_type: str = "agent.googleapis.com/gpu/utilization"
    zone: str = "us-central1-a"
    memory_state: str = ""
    """``used`` / ``free`` for agent.googleapis.com/gpu/memory/bytes_used."""


@dataclass
class MonitoringFake:
    points: list[RawPoint] = field(default_factory=list)
    calls: Counter[str] = field(default_factory=Counter)
    faults: list[grpc.StatusCode] = field(default_factory=list)
    requests: list[monitoring_v3.ListTimeSeriesRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    require_bearer: bool = False
    tokens: list[str] = field(default_factory=list)
    answers: dict[bytes, tuple[int, list[monitoring_v3.TimeSeries]]] = field(default_factory=dict)
    """Query (without its page) -> (points published then, the aggregated series)."""

    def publish(
        self, project: str, instance_id: str, gpu: int, at: datetime, value: float, **kw: Any
    ) -> None:
        self.points.append(RawPoint(project, instance_id, str(gpu), at, value, **kw))

    def list_time_series(
        self, request: monitoring_v3.ListTimeSeriesRequest, context: grpc.ServicerContext
    ) -> monitoring_v3.ListTimeSeriesResponse:
        metadata = dict(context.invocation_metadata())
        auth = str(metadata.get("authorization", ""))
        if auth.startswith("Bearer "):
            self.tokens.append(auth.removeprefix("Bearer "))
        elif self.require_bearer:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "no bearer token")
        with self.lock:
            self.calls["ListTimeSeries"] += 1
            self.requests.append(request)
            fault = self.faults.pop(0) if self.faults else None
        if fault is not None:
            context.abort(fault, "injected")
        metric_type = _metric_type(request.filter)
        if metric_type is None:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "filter must name metric.type")
        agg = request.aggregation
        if (
            agg.per_series_aligner != monitoring_v3.Aggregation.Aligner.ALIGN_MAX
            or agg.cross_series_reducer != monitoring_v3.Aggregation.Reducer.REDUCE_MAX
            or agg.alignment_period.total_seconds() <= 0
        ):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "fake supports ALIGN_MAX+REDUCE_MAX")
        series = self._series(request, metric_type)
        size = min(request.page_size or MAX_PAGE, MAX_PAGE)
        if request.view == monitoring_v3.ListTimeSeriesRequest.TimeSeriesView.HEADERS:
            start = int(request.page_token or 0)
            page = [_header(s) for s in series[start : start + size]]
            following = f"{start + size}" if start + size < len(series) else ""
        else:
            page, following = _points_page(series, request.page_token, size)
        response = monitoring_v3.ListTimeSeriesResponse(time_series=page)
        if following:
            response.next_page_token = following
        return response

    def _series(
        self, request: monitoring_v3.ListTimeSeriesRequest, metric_type: str
    ) -> list[monitoring_v3.TimeSeries]:
        """The aggregated answer, computed once per query (later pages reuse it)."""
        query = monitoring_v3.ListTimeSeriesRequest(request)
        query.page_token, query.page_size = "", 0
        key = monitoring_v3.ListTimeSeriesRequest.serialize(query)
        with self.lock:
            cached = self.answers.get(key)
        if cached is None or cached[0] != len(self.points):
            cached = (len(self.points), self._aggregate(request, metric_type))
            with self.lock:
                self.answers[key] = cached
        return cached[1]

    def _aggregate(
        self, request: monitoring_v3.ListTimeSeriesRequest, metric_type: str
    ) -> list[monitoring_v3.TimeSeries]:
        project = request.name.removeprefix("projects/")
        begin = _as_utc(request.interval.start_time)
        end = _as_utc(request.interval.end_time)
        agg = request.aggregation
        period = timedelta(seconds=agg.alignment_period.total_seconds())
        fields = list(agg.group_by_fields)
        groups: dict[tuple[str, ...], dict[datetime, float]] = {}
        for p in self.points:
            if p.project != project or p.metric_type != metric_type or not begin < p.at <= end:
                continue
            window_end = end - ((end - p.at) // period) * period
            labels = {
                "resource.labels.instance_id": p.instance_id,
                "metric.labels.gpu_number": p.gpu,
                "metric.labels.memory_state": p.memory_state,
            }
            key = tuple(labels[f] for f in fields)
            bucket = groups.setdefault(key, {})
            bucket[window_end] = max(bucket.get(window_end, float("-inf")), p.value)
        out: list[monitoring_v3.TimeSeries] = []
        for key, buckets in sorted(groups.items()):
            values = dict(zip(fields, key, strict=True))
            points = [
                monitoring_v3.Point(
                    interval=monitoring_v3.TimeInterval(
                        start_time=_ts(at - period), end_time=_ts(at)
                    ),
                    value=monitoring_v3.TypedValue(double_value=value),
                )
                for at, value in sorted(buckets.items(), reverse=True)
            ]
            metric_labels = {}
            if "metric.labels.gpu_number" in values:
                metric_labels["gpu_number"] = values["metric.labels.gpu_number"]
            if values.get("metric.labels.memory_state"):
                metric_labels["memory_state"] = values["metric.labels.memory_state"]
            resource_labels = {}
            if "resource.labels.instance_id" in values:
                resource_labels["instance_id"] = values["resource.labels.instance_id"]
            out.append(
                monitoring_v3.TimeSeries(
                    metric={"type": metric_type, "labels": metric_labels},
                    resource={"type": "gce_instance", "labels": resource_labels},
                    points=points,
                )
            )
        return out


def _points_page(
    series: list[monitoring_v3.TimeSeries], token: str, size: int
) -> tuple[list[monitoring_v3.TimeSeries], str]:
    """Up to ``size`` points from the cursor ``series index:point offset``; the next cursor."""
    index, offset = (int(n) for n in token.split(":")) if token else (0, 0)
    page: list[monitoring_v3.TimeSeries] = []
    room = size
    while index < len(series) and room > 0:
        points = list(series[index].points)[offset:]
        taken = points[:room]
        part = _header(series[index])
        part.points.extend(taken)
        page.append(part)
        room -= len(taken)
        if len(taken) < len(points):
            offset += len(taken)
        else:
            index, offset = index + 1, 0
    return page, f"{index}:{offset}" if index < len(series) else ""


def _header(series: monitoring_v3.TimeSeries) -> monitoring_v3.TimeSeries:
    return monitoring_v3.TimeSeries(metric=series.metric, resource=series.resource)


def _metric_type(text: str) -> str | None:
    marker = 'metric.type = "'
    if marker not in text:
        return None
    return text.split(marker, 1)[1].split('"', 1)[0]


def _as_utc(value: datetime) -> datetime:
    return datetime.fromtimestamp(value.timestamp(), tz=UTC)


def _ts(value: datetime) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(value)
    return stamp


@contextmanager
def serve_monitoring(
    fake: MonitoringFake, credentials: grpc.ServerCredentials | None = None
) -> Iterator[str]:
    """Serve on 127.0.0.1; yields ``host:port``."""
    handler = grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "ListTimeSeries": grpc.unary_unary_rpc_method_handler(
                fake.list_time_series,
                request_deserializer=monitoring_v3.ListTimeSeriesRequest.deserialize,
                response_serializer=monitoring_v3.ListTimeSeriesResponse.serialize,
            )
        },
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((handler,))
    address = "127.0.0.1:0"
    port = (
        server.add_secure_port(address, credentials)
        if credentials is not None
        else server.add_insecure_port(address)
    )
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(grace=None)
