"""GPU utilisation from Azure Monitor custom metrics, batched (``metrics:getBatch``).

Azure has no platform GPU metric for VMs. Teams publish one with Telegraf's
``nvidia_smi`` input and ``azure_monitor`` output: namespace ``Telegraf/nvidia_smi``,
metric ``utilization_gpu``, one series per GPU told apart by the ``index`` dimension.
The batch API takes at most 50 resources of one subscription and one region per call
and answers from a regional endpoint (``https://{region}.metrics.monitor.azure.com``),
so calls grow with ceil(VMs per region / 50), never one per VM.

The ``index eq '*'`` filter splits the series per GPU (coverage needs every GPU); the
``top`` limit that comes with a filter (default 10 series per resource) is raised so a
16-GPU VM keeps all its series. A point's ``timeStamp`` is the start of its interval;
an interval with no data comes back with no ``maximum`` and is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from azure.monitor.querymetrics import MetricsClient

BATCH_LIMIT = 50
GPU_DIMENSION = "index"
MAX_SERIES_PER_RESOURCE = 100
PUBLIC_ENDPOINT = "https://{region}.metrics.monitor.azure.com"
PUBLIC_AUDIENCE = "https://metrics.monitor.azure.com"

Samples = dict[str, dict[str, dict[datetime, float]]]


def endpoint_for(template: str | None, region: str) -> str:
    """The metrics endpoint of ``region``; a configured endpoint may hold ``{region}``."""
    return (template or PUBLIC_ENDPOINT).replace("{region}", region).rstrip("/")


def audience_for(template: str | None) -> str:
    """Token audience: the endpoint's host without its region label for Azure hosts
    (sovereign clouds: ``metrics.monitor.azure.us``), else the endpoint itself."""
    if not template:
        return PUBLIC_AUDIENCE
    from urllib.parse import urlsplit

    parts = urlsplit(template.replace("{region}", "region"))
    host = parts.hostname or ""
    marker = "metrics.monitor."
    if marker in host:
        return f"{parts.scheme}://{host[host.index(marker) :]}"
    return f"{parts.scheme}://{parts.netloc}"


def resource_of(metric_id: str) -> str:
    """``<vm id>/providers/Microsoft.Insights/metrics/<name>`` -> ``<vm id>`` (lower case)."""
    lowered = metric_id.lower()
    cut = lowered.find("/providers/microsoft.insights/metrics/")
    return lowered[:cut] if cut >= 0 else lowered


def fetch_region(
    client_for: Callable[[str], MetricsClient],
    *,
    region: str,
    resource_ids: Sequence[str],
    namespace: str,
    metric: str,
    start: datetime,
    end: datetime,
    period_minutes: int,
) -> Samples:
    """resource id (as given) -> GPU index -> period start -> max percent."""
    wanted = {rid.lower(): rid for rid in resource_ids}
    out: Samples = {}
    client = client_for(region)
    ordered = sorted(resource_ids)
    for i in range(0, len(ordered), BATCH_LIMIT):
        results = client.query_resources(
            resource_ids=ordered[i : i + BATCH_LIMIT],
            metric_namespace=namespace,
            metric_names=[metric],
            timespan=(start, end),
            granularity=timedelta(minutes=period_minutes),
            aggregations=["Maximum"],
            filter=f"{GPU_DIMENSION} eq '*'",
            max_results=MAX_SERIES_PER_RESOURCE,
        )
        for result in results:
            _collect(result.metrics, wanted, out, start, end)
    return out


def _collect(
    metrics: Sequence[Any], wanted: dict[str, str], out: Samples, start: datetime, end: datetime
) -> None:
    for item in metrics:
        resource = wanted.get(resource_of(str(item.id or "")))
        if resource is None:
            continue
        for series in item.timeseries or ():
            gpu = str((series.metadata_values or {}).get(GPU_DIMENSION, "0"))
            for value in series.data or ():
                if value.maximum is None or value.timestamp is None:
                    continue
                at = datetime.fromtimestamp(value.timestamp.timestamp(), tz=UTC)
                if start <= at < end:
                    points = out.setdefault(resource, {}).setdefault(gpu, {})
                    points[at] = max(points.get(at, 0.0), float(value.maximum))
