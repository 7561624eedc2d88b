"""A Prometheus fake for the per-pod queries: dcgm-exporter gauges and cAdvisor counters.

It evaluates the two query shapes the Kubernetes provider sends, over raw samples:
``max by (<labels>) (max_over_time(<metric>{<matchers>}[<n>m]))`` and
``sum by (namespace, pod) (rate(<metric>{<matchers>}[<n>m]))`` (left-open windows, as
Prometheus 3). Anything else answers 400, so a query the fake does not know fails loudly.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs

from tests.fakes.http import FakeApi, Reply, Request

GPU = re.compile(
    r"^max by \((?P<group>[^)]*)\) \(max_over_time\((?P<metric>\w+)(?:\{(?P<sel>[^}]*)\})?"
    r"\[(?P<minutes>\d+)m\]\)\)$"
)
CPU = re.compile(
    r"^sum by \((?P<group>[^)]*)\) \(rate\((?P<metric>\w+)(?:\{(?P<sel>[^}]*)\})?"
    r"\[(?P<minutes>\d+)m\]\)\)$"
)
MATCHER = re.compile(r'\s*(\w+)\s*(!=|=)\s*"((?:[^"\\]|\\.)*)"\s*')


@dataclass
class PodPrometheus(FakeApi):
    series: list[tuple[dict[str, str], dict[float, float]]] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    down: bool = False
    """Answer 503 to every query (a metrics outage)."""

    def __post_init__(self) -> None:
        self.route("POST", r"/api/v1/query_range", "query_range", self._query_range)

    def error_body(self, status: int, message: str) -> Any:
        return {"status": "error", "errorType": "internal", "error": message}

    index: dict[tuple[tuple[str, str], ...], dict[float, float]] = field(default_factory=dict)

    def publish(self, labels: dict[str, str], at: datetime, value: float) -> None:
        key = tuple(sorted(labels.items()))
        points = self.index.get(key)
        if points is None:
            points = self.index[key] = {}
            self.series.append((dict(labels), points))
        points[at.timestamp()] = value

    def _query_range(self, request: Request) -> Reply:
        if self.down:
            return 503, {}, self.error_body(503, "down")
        form = {k: v[-1] for k, v in parse_qs(request.body.decode()).items()}
        query = form.get("query", "")
        self.queries.append(query)
        gpu, cpu = GPU.match(query), CPU.match(query)
        found = gpu or cpu
        if found is None:
            return 400, {}, {"status": "error", "errorType": "bad_data", "error": "unsupported"}
        group = [g.strip() for g in found["group"].split(",")]
        matchers = MATCHER.findall(found["sel"] or "")
        width = int(found["minutes"]) * 60
        start, end, step = float(form["start"]), float(form["end"]), float(form["step"])
        groups: dict[tuple[tuple[str, str], ...], dict[float, float]] = {}
        for labels, points in self.series:
            if labels.get("__name__") != found["metric"] or not _matches(labels, matchers):
                continue
            key = tuple((g, labels[g]) for g in group if labels.get(g))
            times = sorted(points)
            t = start
            while t <= end:
                lo, hi = bisect_right(times, t - width), bisect_right(times, t)
                inside = [(s, points[s]) for s in times[lo:hi]]
                value = _rate(inside) if cpu else (max(v for _, v in inside) if inside else None)
                if value is not None:
                    bucket = groups.setdefault(key, {})
                    bucket[t] = (
                        bucket.get(t, 0.0) + value
                        if cpu
                        else max(value, bucket.get(t, float("-inf")))
                    )
                t += step
        result = [
            {"metric": dict(k), "values": [[t, str(v)] for t, v in sorted(points.items())]}
            for k, points in groups.items()
        ]
        return 200, {}, {"status": "success", "data": {"resultType": "matrix", "result": result}}


def _matches(labels: dict[str, str], matchers: list[tuple[str, str, str]]) -> bool:
    for key, op, value in matchers:
        have = labels.get(key, "")
        if (op == "=" and have != value) or (op == "!=" and have == value):
            return False
    return True


def _rate(inside: list[tuple[float, float]]) -> float | None:
    if len(inside) < 2:
        return None
    (t0, v0), (t1, v1) = inside[0], inside[-1]
    return (v1 - v0) / (t1 - t0) if t1 > t0 else None
