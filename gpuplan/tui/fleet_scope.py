"""Drawing helpers for the Fleet screen's utilisation sparklines."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from gpuplan.core.lifecycle.instances import HostSamples


def busiest_per_period(
    samples: HostSamples | None, periods: Sequence[datetime]
) -> list[float | None]:
    """For the sparkline: the busiest GPU's percent in each period, None where none reported."""
    gpus = samples.utilisation if samples is not None else {}
    out: list[float | None] = []
    for start in periods:
        values = [series[start] for series in gpus.values() if start in series]
        out.append(max(values) if values else None)
    return out
