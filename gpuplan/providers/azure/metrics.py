"""GPU utilisation from Azure Monitor custom metrics, batched (``metrics:getBatch``).

Azure has no platform GPU metric for VMs. Teams publish one with Telegraf's
``nvidia_smi`` input and ``azure_monitor`` output: namespace ``Telegraf/nvidia_smi``,
metric ``utilization_gpu``, one series per GPU told apart by the ``index`` dimension.
The batch API takes at most 50 resources of one subscription and one region per call
and answers from a regional endpoint (``https://{region}.metrics.monitor.azure.com``),
so calls grow with ceil(VMs per region / 50), never one per VM.

GPU memory comes from the same Telegraf namespace (``memory_used`` and ``memory_total``,
MiB, per GPU) in the same request; the VM's CPU is the platform metric ``Percentage CPU``
(namespace ``Microsoft.Compute/virtualMachines``) in one more batch: calls grow with
2 x ceil(VMs per region / 50). Series belong to a VM by its resource id only.

The ``index eq '*'`` filter splits the series per GPU (coverage needs every GPU); the
``top`` limit that comes with a filter (default 10 series per resource) is raised so a
16-GPU VM keeps all its series. A point's ``timeStamp`` is the start of its interval;
an interval with no data comes back with no ``maximum`` and is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from gpuplan.core.lifecycle.instances import HostSamples
from gpuplan.providers.azure.metrics_settings import AzureMetrics

if TYPE_CHECKING:
    from azure.monitor.querymetrics import MetricsClient

BATCH_LIMIT = 50
_POLICY = AzureMetrics()
GPU_DIMENSION = "index"
MAX_SERIES_PER_RESOURCE = 100
PUBLIC_ENDPOINT = "https://{region}.metrics.monitor.azure.com"
PUBLIC_AUDIENCE = "https://metrics.monitor.azure.com"

Samples = dict[str, dict[str, dict[datetime, float]]]
PLATFORM_NAMESPACE = "Microsoft.Compute/virtualMachines"


@dataclass(frozen=True)
class MetricNames:
    """Where the signals are published (policy ``idle.metrics.azure``, whose defaults are
    these: the metric names are written once, in the policy's settings model)."""

    namespace: str = _POLICY.namespace
    utilisation: str = _POLICY.metric
    memory_used: str = _POLICY.memory_used_metric
    memory_total: str = _POLICY.memory_total_metric
    cpu: str = _POLICY.cpu_metric


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
    names: MetricNames,
    start: datetime,
    end: datetime,
    period_minutes: int,
) -> dict[str, HostSamples]:
    """resource id (as given) -> utilisation, GPU memory and CPU."""
    wanted = {rid.lower(): rid for rid in resource_ids}
    gpu_metrics = [names.utilisation, names.memory_used, names.memory_total]
    by_metric: dict[str, Samples] = {name: {} for name in [*gpu_metrics, names.cpu]}
    client = client_for(region)
    ordered = sorted(resource_ids)
    common: dict[str, Any] = {
        "timespan": (start, end),
        "granularity": timedelta(minutes=period_minutes),
        "aggregations": ["Maximum"],
    }
    for i in range(0, len(ordered), BATCH_LIMIT):
        chunk = ordered[i : i + BATCH_LIMIT]
        gpu_results = client.query_resources(
            resource_ids=chunk,
            metric_namespace=names.namespace,
            metric_names=gpu_metrics,
            filter=f"{GPU_DIMENSION} eq '*'",
            max_results=MAX_SERIES_PER_RESOURCE * len(gpu_metrics),
            **common,
        )
        cpu_results = client.query_resources(
            resource_ids=chunk,
            metric_namespace=PLATFORM_NAMESPACE,
            metric_names=[names.cpu],
            **common,
        )
        for result in [*gpu_results, *cpu_results]:
            _collect(result.metrics, wanted, by_metric, start, end)
    util = by_metric[names.utilisation]
    return {
        rid: HostSamples(
            utilisation=gpus,
            memory=_memory(
                by_metric[names.memory_used].get(rid, {}),
                by_metric[names.memory_total].get(rid, {}),
            ),
            cpu=next(iter(by_metric[names.cpu].get(rid, {}).values()), {}),
        )
        for rid, gpus in util.items()
    }


def _memory(
    used: dict[str, dict[datetime, float]], total: dict[str, dict[datetime, float]]
) -> dict[str, dict[datetime, float]]:
    """GPU -> period -> memory in use, percent of that GPU's total."""
    out: dict[str, dict[datetime, float]] = {}
    for gpu, points in used.items():
        whole = total.get(gpu, {})
        for t, value in points.items():
            size = whole.get(t) or max(whole.values(), default=0.0)
            if size > 0:
                out.setdefault(gpu, {})[t] = min(100.0, 100.0 * value / size)
    return out


def _collect(
    metrics: Sequence[Any],
    wanted: dict[str, str],
    by_metric: dict[str, Samples],
    start: datetime,
    end: datetime,
) -> None:
    for item in metrics:
        resource = wanted.get(resource_of(str(item.id or "")))
        out = by_metric.get(str(item.name or ""))
        if resource is None or out is None:
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
