"""GPU utilisation from a Prometheus that scrapes NVIDIA's dcgm-exporter, for any cloud.

One ``query_range`` per run (POST, so a long instance selector fits)::

    max by (<instance_label>, gpu) (
      max_over_time(<metric>{<instance_label>=~"<ids>"}[<period>m])
    )

with ``step`` = the period. Grouping keeps the ``gpu`` label, so coverage still counts
every GPU of an instance (a GPU that stopped reporting leaves holes); the busiest GPU
per period is the core's job, as for the clouds. The value at time *t* covers the
period that ends at *t*, so it is filed under *t - period*.

``DCGM_FI_DEV_GPU_UTIL`` is a percent; the profiling fields (``DCGM_FI_PROF_*``, e.g.
``DCGM_FI_PROF_GR_ENGINE_ACTIVE``) are ratios 0..1 and are scaled to percent. The
instance label may carry the instance id, the name, or (Azure) the VM's ``vmId``.
Transient answers (429, 502, 503, 504, connection errors) are retried with backoff.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from gpuplan.core.fleet import GpuInstance, GpuSamples
from gpuplan.providers.base import ProviderError

DEFAULT_METRIC = "DCGM_FI_DEV_GPU_UTIL"
RATIO_PREFIX = "DCGM_FI_PROF_"
TRANSIENT = frozenset({429, 502, 503, 504})
_REGEX_SPECIAL = set(".+*?()[]{}|^$\\")


def instance_keys(instance: GpuInstance) -> list[str]:
    """Values the instance label may hold for this instance (lower case)."""
    keys = [instance.instance_id, instance.name or "", instance.attributes.get("vm_id", "")]
    return [k.lower() for k in keys if k]


def _regex_literal(text: str) -> str:
    # Escaped for RE2, then for a double-quoted PromQL string (backslash doubled).
    return "".join("\\\\" + c if c in _REGEX_SPECIAL else c for c in text).replace('"', '\\"')


def build_query(metric: str, label: str, keys: Sequence[str], period_minutes: int) -> str:
    selector = "|".join(_regex_literal(k) for k in sorted(set(keys)))
    return (
        f'max by ({label}, gpu) (max_over_time({metric}{{{label}=~"(?i)({selector})"}}'
        f"[{period_minutes}m]))"
    )


class PrometheusSource:
    """Reads dcgm-exporter utilisation for many instances in one query."""

    def __init__(
        self,
        url: str,
        *,
        metric: str = DEFAULT_METRIC,
        instance_label: str = "instance_id",
        timeout_s: float = 30.0,
        attempts: int = 4,
        backoff_s: float = 1.0,
    ) -> None:
        self.url = url.rstrip("/")
        self.metric = metric
        self.instance_label = instance_label
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
    ) -> dict[str, GpuSamples]:
        owners: dict[str, str] = {}
        for item in instances:
            for key in instance_keys(item):
                owners.setdefault(key, item.instance_id)
        if not owners:
            return {}
        period = timedelta(minutes=period_minutes)
        form = {
            "query": build_query(self.metric, self.instance_label, list(owners), period_minutes),
            "start": f"{(start + period).timestamp():.0f}",
            "end": f"{end.timestamp():.0f}",
            "step": f"{period_minutes * 60}",
        }
        data = self._post("/api/v1/query_range", form)
        scale = 100.0 if self.metric.startswith(RATIO_PREFIX) else 1.0
        out: dict[str, dict[str, dict[datetime, float]]] = {}
        for series in data.get("result", ()):
            labels = series.get("metric", {})
            owner = owners.get(str(labels.get(self.instance_label, "")).lower())
            if owner is None:
                continue
            gpu = str(labels.get("gpu", "0"))
            points = out.setdefault(owner, {}).setdefault(gpu, {})
            for stamp, raw in series.get("values", ()):
                value = float(raw)
                if value != value:  # NaN: no sample
                    continue
                begin = datetime.fromtimestamp(float(stamp), tz=UTC) - period
                points[begin] = max(points.get(begin, 0.0), value * scale)
        return dict(out)

    def _post(self, path: str, form: Mapping[str, str]) -> Any:
        body = urllib.parse.urlencode(form).encode()
        last = ""
        for attempt in range(self._attempts):
            if attempt:
                time.sleep(self._backoff_s * 2 ** (attempt - 1))
            self.calls += 1
            request = urllib.request.Request(
                self.url + path,
                data=body,
                headers={"Content-Type": "application/x-www-form-urlencoded"},
                method="POST",
            )
            try:
                with urllib.request.urlopen(request, timeout=self._timeout_s) as response:
                    return _data(json.load(response))
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}: {_error_text(exc)}"
                if exc.code not in TRANSIENT:
                    break
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = str(getattr(exc, "reason", exc))
        raise ProviderError(f"prometheus {self.url}: query_range failed ({last})")


def _data(payload: Any) -> Any:
    if not isinstance(payload, dict) or payload.get("status") != "success":
        error = payload.get("error") if isinstance(payload, dict) else payload
        raise ProviderError(f"prometheus: query failed: {error}")
    return payload.get("data") or {}


def _error_text(exc: urllib.error.HTTPError) -> str:
    try:
        payload = json.loads(exc.read() or b"{}")
    except (ValueError, OSError):
        return exc.reason if isinstance(exc.reason, str) else ""
    return str(payload.get("error") or exc.reason)
