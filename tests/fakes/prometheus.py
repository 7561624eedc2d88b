"""A Prometheus HTTP API fake that evaluates the one query shape gpuplan sends.

``max by (<label>, gpu) (max_over_time(<metric>{<label>=~"<re>"}[<n>m]))`` over raw
samples stored per series (labels as dcgm-exporter writes them: ``gpu``, ``UUID``,
``Hostname``, ``instance`` plus a relabelled instance-id label). Range selectors are
left-open ``(t - range, t]`` as in Prometheus 3. Anything else answers 400 ``bad_data``,
so a query change that the fake does not understand fails loudly.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tests.fakes.http import FakeApi, Reply, Request

CPU_QUERY = re.compile(
    r"^100 \* \(1 - avg by \((?P<label>\w+)\) \(rate\((?P<metric>\w+)"
    r'\{mode="idle", (?P=label)=~"(?P<regex>(?:[^"\\]|\\.)*)"\}\[(?P<minutes>\d+)m\]\)\)\)$'
)
QUERY = re.compile(
    r"^max by \((?P<label>\w+), gpu\) \(max_over_time\((?P<metric>\w+)"
    r'\{(?P=label)=~"(?P<regex>(?:[^"\\]|\\.)*)"\}\[(?P<minutes>\d+)m\]\)\)$'
)


@dataclass
class PrometheusFake(FakeApi):
    series: list[tuple[dict[str, str], dict[float, float]]] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    index: dict[tuple[tuple[str, str], ...], dict[float, float]] = field(default_factory=dict)
    """Labels -> the points of that series (in ``series``), so publishing stays quick."""

    def __post_init__(self) -> None:
        self.route("POST", r"/api/v1/query_range", "query_range", self._query_range)

    def error_body(self, status: int, message: str) -> Any:
        return {"status": "error", "errorType": "internal", "error": message}

    def publish(self, labels: dict[str, str], at: datetime, value: float) -> None:
        key = tuple(sorted(labels.items()))
        if len(self.index) != len(self.series):  # ``series`` was edited by hand: re-index
            self.index = {tuple(sorted(lab.items())): pts for lab, pts in self.series}
        points = self.index.get(key)
        if points is None:
            points = self.index[key] = {}
            self.series.append((dict(labels), points))
        points[at.timestamp()] = value

    def _query_range(self, request: Request) -> Reply:
        form = {k: v[-1] for k, v in _parse_form(request.body).items()}
        query = form.get("query", "")
        self.queries.append(query)
        if CPU_QUERY.match(query):
            return self._cpu(form, CPU_QUERY.match(query))
        match = QUERY.match(query)
        if match is None:
            return 400, {}, {"status": "error", "errorType": "bad_data", "error": "unsupported"}
        label, metric = match["label"], match["metric"]
        regex = re.compile(match["regex"].replace("\\\\", "\\").replace('\\"', '"'))
        width = int(match["minutes"]) * 60
        start, end, step = float(form["start"]), float(form["end"]), float(form["step"])
        groups: dict[tuple[str, str], dict[float, float]] = {}
        for labels, points in self.series:
            if labels.get("__name__") != metric or not regex.fullmatch(labels.get(label, "")):
                continue
            key = (labels.get(label, ""), labels.get("gpu", ""))
            times = sorted(points)
            t = start
            while t <= end:
                inside = [v for _, v in _window(times, points, t, width)]
                if inside:
                    bucket = groups.setdefault(key, {})
                    bucket[t] = max(max(inside), bucket.get(t, float("-inf")))
                t += step
        result = [
            {
                "metric": {label: key[0], "gpu": key[1]},
                "values": [[t, repr(v)] for t, v in sorted(points.items())],
            }
            for key, points in sorted(groups.items())
        ]
        return 200, {}, {"status": "success", "data": {"resultType": "matrix", "result": result}}

    def _cpu(self, form: dict[str, str], match: re.Match[str] | None) -> Reply:
        """``100 * (1 - avg by (label) (rate(counter{mode="idle", label=~re}[n m])))``."""
        assert match is not None
        label, metric = match["label"], match["metric"]
        regex = re.compile(match["regex"].replace("\\\\", "\\").replace('\\"', '"'))
        width = int(match["minutes"]) * 60
        start, end, step = float(form["start"]), float(form["end"]), float(form["step"])
        rates: dict[str, dict[float, list[float]]] = {}
        for labels, points in self.series:
            if labels.get("__name__") != metric or labels.get("mode") != "idle":
                continue
            if not regex.fullmatch(labels.get(label, "")):
                continue
            times = sorted(points)
            t = start
            while t <= end:
                rate = _rate(times, points, t, width)
                if rate is not None:
                    rates.setdefault(labels[label], {}).setdefault(t, []).append(rate)
                t += step
        result = [
            {
                "metric": {label: key},
                "values": [[t, repr(100 * (1 - sum(r) / len(r)))] for t, r in sorted(by_t.items())],
            }
            for key, by_t in sorted(rates.items())
        ]
        return 200, {}, {"status": "success", "data": {"resultType": "matrix", "result": result}}


def _window(
    times: list[float], points: dict[float, float], t: float, width: int
) -> list[tuple[float, float]]:
    """The samples in ``(t - width, t]``, oldest first; ``times`` is ``sorted(points)``
    (bisected, so a week of hourly steps stays quick)."""
    chosen = times[bisect_right(times, t - width) : bisect_right(times, t)]
    return [(at, points[at]) for at in chosen]


def _rate(times: list[float], points: dict[float, float], t: float, width: int) -> float | None:
    inside = _window(times, points, t, width)
    if len(inside) < 2:
        return None
    (t0, v0), (t1, v1) = inside[0], inside[-1]
    return (v1 - v0) / (t1 - t0)


def _parse_form(body: bytes) -> dict[str, list[str]]:
    from urllib.parse import parse_qs

    return parse_qs(body.decode(), keep_blank_values=True)
