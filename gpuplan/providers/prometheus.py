"""GPU signals from a Prometheus that scrapes NVIDIA's dcgm-exporter, for any cloud.

Four ``query_range`` per run, whatever the number of instances (POST, so a long instance
selector fits): utilisation, framebuffer memory used and free (``DCGM_FI_DEV_FB_USED``,
``DCGM_FI_DEV_FB_FREE``, MiB; in use = used / (used + free)) in the shape below, and the
instance CPU from node_exporter::

    100 * (1 - avg by (<instance_label>) (
      rate(node_cpu_seconds_total{mode="idle", <instance_label>=~"<ids>"}[<period>m])))

The GPU queries read::

    max by (<instance_label>, gpu) (
      max_over_time(<metric>{<instance_label>=~"<ids>"}[<period>m])
    )

with ``step`` = the period. Grouping keeps the ``gpu`` label, so coverage still counts
every GPU of an instance (a GPU that stopped reporting leaves holes); the busiest GPU
per period is the core's job, as for the clouds. The value at time *t* covers the
period that ends at *t*, so it is filed under *t - period*.

Series belong to an instance by the instance label only, holding the instance id (or,
for Azure, the VM's ``vmId``): never by name, since names repeat across scopes.

``DCGM_FI_DEV_GPU_UTIL`` is a percent; the profiling fields (``DCGM_FI_PROF_*``, e.g.
``DCGM_FI_PROF_GR_ENGINE_ACTIVE``) are ratios 0..1 and are scaled to percent.
Transient answers (429, 502, 503, 504, connection errors) are retried with backoff
(:mod:`gpuplan.providers.http`: httpx, no redirects, a 64 MiB answer cap). An answer
that is not the API's JSON (an HTML login page, a non-numeric or negative sample) is a
one-line :class:`ProviderError`, so every instance of the run is ``unknown``; the URL
in any message is redacted (credentials, query and tokens hidden).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from gpuplan.core.lifecycle.instances import GpuInstance, HostSamples
from gpuplan.core.policy.metrics_settings import PrometheusMetrics
from gpuplan.providers.base import ProviderError
from gpuplan.providers.http import HttpError, Limits, decode_json, request
from gpuplan.providers.url_parts import redact_url

_DEFAULTS = PrometheusMetrics.model_fields
"""``idle.metrics.prometheus``'s defaults: the metric names are written once, there."""
DEFAULT_METRIC: str = _DEFAULTS["metric"].default
DEFAULT_MEMORY_USED: str = _DEFAULTS["memory_used_metric"].default
DEFAULT_MEMORY_FREE: str = _DEFAULTS["memory_free_metric"].default
DEFAULT_CPU: str = _DEFAULTS["cpu_metric"].default
RATIO_PREFIX = "DCGM_FI_PROF_"
MAX_ANSWER_BYTES = 64 * 1024 * 1024
_REGEX_SPECIAL = set(".+*?()[]{}|^$\\")


def instance_keys(instance: GpuInstance) -> list[str]:
    """Values the instance label may hold for this instance (lower case): ids only."""
    keys = [instance.instance_id, instance.attributes.get("vm_id", "")]
    return [k.lower() for k in keys if k]


def _regex_literal(text: str) -> str:
    # Escaped for RE2, then for a double-quoted PromQL string (backslash doubled).
    return "".join("\\\\" + c if c in _REGEX_SPECIAL else c for c in text).replace('"', '\\"')


def _selector(keys: Sequence[str]) -> str:
    return "(?i)(" + "|".join(_regex_literal(k) for k in sorted(set(keys))) + ")"


def build_query(metric: str, label: str, keys: Sequence[str], period_minutes: int) -> str:
    return (
        f'max by ({label}, gpu) (max_over_time({metric}{{{label}=~"{_selector(keys)}"}}'
        f"[{period_minutes}m]))"
    )


def build_cpu_query(metric: str, label: str, keys: Sequence[str], period_minutes: int) -> str:
    return (
        f'100 * (1 - avg by ({label}) (rate({metric}{{mode="idle", '
        f'{label}=~"{_selector(keys)}"}}[{period_minutes}m])))'
    )


class PrometheusSource:
    """Reads dcgm-exporter utilisation for many instances in one query."""

    def __init__(
        self,
        url: str,
        *,
        metric: str = DEFAULT_METRIC,
        instance_label: str = "instance_id",
        memory_used_metric: str = DEFAULT_MEMORY_USED,
        memory_free_metric: str = DEFAULT_MEMORY_FREE,
        cpu_metric: str = DEFAULT_CPU,
        timeout_s: float = 30.0,
        attempts: int = 4,
        backoff_s: float = 1.0,
    ) -> None:
        self.url = url.rstrip("/")
        self.metric = metric
        self.instance_label = instance_label
        self.memory_metrics = (memory_used_metric, memory_free_metric)
        self.cpu_metric = cpu_metric
        self._timeout_s = timeout_s
        self._attempts = attempts
        self._backoff_s = backoff_s
        self.calls = 0

    def fetch_utilisation(
        self,
        instances: Sequence[GpuInstance],
        *,
        start: datetime,
        end: datetime,
        period_minutes: int,
    ) -> dict[str, HostSamples]:
        owners: dict[str, str] = {}
        for item in instances:
            for key in instance_keys(item):
                owners.setdefault(key, item.instance_id)
        if not owners:
            return {}
        keys, label = list(owners), self.instance_label
        read = functools.partial(self._read, owners, start, end, period_minutes)
        util = read(build_query(self.metric, label, keys, period_minutes))
        if self.metric.startswith(RATIO_PREFIX):
            util = {o: {g: {t: v * 100 for t, v in p.items()} for g, p in s.items()}
                    for o, s in util.items()}  # fmt: skip
        used, free = (
            read(build_query(m, label, keys, period_minutes)) for m in self.memory_metrics
        )
        cpu = read(build_cpu_query(self.cpu_metric, label, keys, period_minutes))
        return {
            owner: HostSamples(
                utilisation=gpus,
                memory=memory_percent(used.get(owner, {}), free.get(owner, {})),
                cpu=next(iter(cpu.get(owner, {}).values()), {}),
            )
            for owner, gpus in util.items()
        }

    def _read(
        self,
        owners: Mapping[str, str],
        start: datetime,
        end: datetime,
        period_minutes: int,
        query: str,
    ) -> dict[str, dict[str, dict[datetime, float]]]:
        """owner -> ``gpu`` label ("0" when absent) -> period start -> value."""
        period = timedelta(minutes=period_minutes)
        form = {
            "query": query,
            "start": f"{(start + period).timestamp():.0f}",
            "end": f"{end.timestamp():.0f}",
            "step": f"{period_minutes * 60}",
        }
        data = self._post("/api/v1/query_range", form)
        out: dict[str, dict[str, dict[datetime, float]]] = {}
        for series in data.get("result", ()):
            labels, values = _series(series)
            owner = owners.get(str(labels.get(self.instance_label, "")).lower())
            if owner is None:
                continue
            gpu = str(labels.get("gpu", "0"))
            points = out.setdefault(owner, {}).setdefault(gpu, {})
            for sample in filter(None, map(_sample, values)):
                begin = sample[0] - period
                points[begin] = max(points.get(begin, 0.0), sample[1])
        return out

    def _post(self, path: str, form: Mapping[str, str]) -> Any:
        """POST a form to the API; the ``data`` of a successful answer, else ProviderError.

        Transport through :mod:`gpuplan.providers.http` (timeouts, bounded retries of
        transient answers, no redirects, a size cap); every message names the URL
        redacted, so credentials in it never reach the terminal or the ledger.
        """
        limits = Limits(
            connect_s=min(self._timeout_s, 10.0),
            read_s=self._timeout_s,
            attempts=self._attempts,
            backoff_s=self._backoff_s,
            max_bytes=MAX_ANSWER_BYTES,
        )
        url = self.url + path
        self.calls += 1
        try:
            response = request("POST", url, limits=limits, data=form)
            payload = decode_json(response, url, ok_only=False)
        except HttpError as exc:
            raise ProviderError(f"prometheus: query_range failed: {exc.message}") from None
        return _data(payload, redact_url(url), response.status)


def memory_percent(
    used: Mapping[str, Mapping[datetime, float]], free: Mapping[str, Mapping[datetime, float]]
) -> dict[str, dict[datetime, float]]:
    """GPU memory in use, percent of total, per GPU and period: used / (used + free)
    (dcgm-exporter's FB_USED and FB_FREE; a period without both is left out)."""
    out: dict[str, dict[datetime, float]] = {}
    for gpu, points in used.items():
        for t, value in points.items():
            rest = free.get(gpu, {}).get(t)
            if rest is not None and value + rest > 0:
                out.setdefault(gpu, {})[t] = 100.0 * value / (value + rest)
    return out


def _data(payload: Any, shown: str, status: int) -> dict[str, Any]:
    """The ``data`` object of a Prometheus API answer; errors as one redacted line."""
    if not isinstance(payload, dict) or payload.get("status") != "success":
        error = payload.get("error") if isinstance(payload, dict) else None
        text = str(error)[:200] if error else "not a Prometheus API answer"
        raise ProviderError(f"prometheus: {shown}: query failed (HTTP {status}): {text}")
    data = payload.get("data") or {}
    if not isinstance(data, dict) or not isinstance(data.get("result", []), list):
        raise ProviderError(f"prometheus: {shown}: answer has no result list")
    return data


def _series(item: Any) -> tuple[Mapping[str, Any], list[Any]]:
    """Labels and values of one result series; ProviderError when it is malformed."""
    labels = item.get("metric") if isinstance(item, dict) else None
    values = item.get("values", []) if isinstance(item, dict) else None
    if not isinstance(labels, dict) or not isinstance(values, list):
        raise ProviderError("prometheus: a result series without metric labels or values")
    return labels, values


def _sample(point: Any) -> tuple[datetime, float] | None:
    """``[stamp, "value"]`` as (time, value); None for NaN (no sample); else ProviderError."""
    if not isinstance(point, list | tuple) or len(point) != 2:
        raise ProviderError(f"prometheus: a sample that is not [time, value]: {str(point)[:60]}")
    stamp, raw = point
    try:
        value = float(raw)
        when = datetime.fromtimestamp(float(stamp), tz=UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        raise ProviderError(
            f"prometheus: a non-numeric sample ({str(stamp)[:30]}, {str(raw)[:30]})"
        ) from None
    if value != value:  # NaN: no sample
        return None
    if value in (float("inf"), float("-inf")) or value < -1.0:
        raise ProviderError(f"prometheus: a sample out of range ({str(raw)[:30]})")
    return when, max(value, 0.0)  # 100 * (1 - idle rate) can dip a hair below 0
