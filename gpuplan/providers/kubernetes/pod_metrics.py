"""GPU, GPU memory and CPU per pod from a Prometheus scraping dcgm-exporter and cAdvisor.

dcgm-exporter with pod attribution labels every ``DCGM_FI_*`` series with the pod's
``namespace`` and ``pod``; where the scrape does not honour the target's labels they
arrive as ``exported_namespace`` / ``exported_pod`` (and ``namespace``/``pod`` then name
the exporter itself). Both layouts are read: ``exported_*`` wins when present. A series
belongs to a pod by (namespace, pod name) only, never by node or host.

Utilisation is ``DCGM_FI_PROF_GR_ENGINE_ACTIVE`` (0..1, scaled to percent) for a pod that
has it, else ``DCGM_FI_DEV_GPU_UTIL``; memory in use is FB_USED / (FB_USED + FB_FREE);
CPU is cAdvisor's ``container_cpu_usage_seconds_total`` rate as a percent of the pod's
CPU request (of one core where it requests none). Six queries per survey, whatever the
number of pods. A workload's GPUs are its pods' GPUs (``<pod>/<gpu>`` keys), so the
core's busiest-GPU and coverage rules apply across its replicas.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from gpuplan.core.lifecycle.instances import HostSamples
from gpuplan.providers.prometheus import PrometheusSource, _sample, _series, memory_percent

PROFILING = "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
UTIL = "DCGM_FI_DEV_GPU_UTIL"
FB_USED = "DCGM_FI_DEV_FB_USED"
FB_FREE = "DCGM_FI_DEV_FB_FREE"
CPU = "container_cpu_usage_seconds_total"
GROUP = "namespace, pod, exported_namespace, exported_pod, gpu"

PodKey = tuple[str, str]
Series = dict[PodKey, dict[str, dict[datetime, float]]]


@dataclass(frozen=True)
class PodRef:
    namespace: str
    name: str
    cpu_cores: float | None


def _matchers(labels: Mapping[str, str], extra: str = "") -> str:
    parts = [f'{k}="{_quoted(v)}"' for k, v in sorted(labels.items())]
    if extra:
        parts.insert(0, extra)
    return "{" + ", ".join(parts) + "}" if parts else ""


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def gpu_query(metric: str, labels: Mapping[str, str], period_minutes: int) -> str:
    return f"max by ({GROUP}) (max_over_time({metric}{_matchers(labels)}[{period_minutes}m]))"


def cpu_query(labels: Mapping[str, str], period_minutes: int) -> str:
    sel = _matchers(labels, 'container!=""')
    return f"sum by (namespace, pod) (rate({CPU}{sel}[{period_minutes}m]))"


def pod_of(labels: Mapping[str, object]) -> PodKey:
    if labels.get("exported_pod"):
        return str(labels.get("exported_namespace", "")), str(labels["exported_pod"])
    return str(labels.get("namespace", "")), str(labels.get("pod", ""))


class PodMetrics(PrometheusSource):
    """Per-pod dcgm-exporter and cAdvisor signals, folded into workloads."""

    def __init__(self, url: str, *, labels: Mapping[str, str] | None = None, **kw: float) -> None:
        super().__init__(url, **kw)  # type: ignore[arg-type]  # timeouts and retries only
        self.labels = dict(labels or {})

    def workload_samples(
        self,
        units: Mapping[str, Sequence[PodRef]],
        *,
        start: datetime,
        end: datetime,
        period_minutes: int,
    ) -> dict[str, HostSamples]:
        """Unit id -> its pods' signals; units whose pods have no GPU series are absent."""
        if not units:
            return {}

        def read(query: str) -> Series:
            return self._read_pods(query, start, end, period_minutes)

        prof = read(gpu_query(PROFILING, self.labels, period_minutes))
        util = read(gpu_query(UTIL, self.labels, period_minutes))
        used = read(gpu_query(FB_USED, self.labels, period_minutes))
        free = read(gpu_query(FB_FREE, self.labels, period_minutes))
        cpu = read(cpu_query(self.labels, period_minutes))
        out: dict[str, HostSamples] = {}
        for unit, pods in units.items():
            gpus: dict[str, dict[datetime, float]] = {}
            memory: dict[str, dict[datetime, float]] = {}
            for pod in pods:
                key = (pod.namespace, pod.name)
                if key in prof:
                    series = {g: {t: v * 100 for t, v in p.items()} for g, p in prof[key].items()}
                else:
                    series = util.get(key, {})
                gpus.update({f"{pod.name}/{g}": p for g, p in series.items()})
                for g, points in memory_percent(used.get(key, {}), free.get(key, {})).items():
                    memory[f"{pod.name}/{g}"] = points
            if gpus:
                out[unit] = HostSamples(gpus, memory, _cpu_percent(pods, cpu))
        return out

    def _read_pods(self, query: str, start: datetime, end: datetime, period_minutes: int) -> Series:
        period = timedelta(minutes=period_minutes)
        form = {
            "query": query,
            "start": f"{(start + period).timestamp():.0f}",
            "end": f"{end.timestamp():.0f}",
            "step": f"{period_minutes * 60}",
        }
        data = self._post("/api/v1/query_range", form)
        out: Series = {}
        for item in data.get("result", ()):
            labels, values = _series(item)
            key = pod_of(labels)
            if not key[1]:
                continue
            points = out.setdefault(key, {}).setdefault(str(labels.get("gpu", "0")), {})
            for sample in filter(None, map(_sample, values)):
                begin = sample[0] - period
                points[begin] = max(points.get(begin, 0.0), sample[1])
        return out


def _cpu_percent(pods: Sequence[PodRef], cpu: Series) -> dict[datetime, float]:
    used: dict[datetime, float] = {}
    asked = 0.0
    for pod in pods:
        series = cpu.get((pod.namespace, pod.name))
        if not series:
            continue
        asked += pod.cpu_cores or 1.0
        for t, cores in next(iter(series.values())).items():
            used[t] = used.get(t, 0.0) + cores
    return {t: min(100.0 * v / asked, 100.0) for t, v in used.items()} if asked else {}
