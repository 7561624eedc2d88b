"""A toy metrics source for the registry test: the whole of a new source, in one module.

``ToyMetrics`` is its policy section (``idle.metrics.toy``), ``ToySource`` the source
(the same flat utilisation, GPU memory and CPU for every instance asked about, in every
period), ``TOY_ENTRY`` its one registry entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict

from gpuplan.core.lifecycle.instances import GpuInstance, HostSamples
from gpuplan.usecases.clouds.metrics_sources import IdMatch, MetricsEntry


class ToyMetrics(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    utilisation: float
    memory_percent: float
    cpu_percent: float


class ToySource:
    def __init__(self, settings: ToyMetrics) -> None:
        self.settings = settings

    def fetch_utilisation(
        self,
        instances: Sequence[GpuInstance],
        *,
        start: datetime,
        end: datetime,
        period_minutes: int,
    ) -> dict[str, HostSamples]:
        step = timedelta(minutes=period_minutes)
        periods = [start + k * step for k in range(int((end - start) / step))]
        s = self.settings
        return {
            i.instance_id: HostSamples(
                utilisation={"0": dict.fromkeys(periods, s.utilisation)},
                memory={"0": dict.fromkeys(periods, s.memory_percent)},
                cpu=dict.fromkeys(periods, s.cpu_percent),
            )
            for i in instances
        }


TOY_ENTRY = MetricsEntry("toy", ToyMetrics, IdMatch.INSTANCE_ID, factory=ToySource)
