"""Toycloud's own monitoring: ``idle.metrics.toy``, checked by this model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from gpuplan.providers.cloud_entry import IdMatch, NativeMetrics


class ToyMetrics(BaseModel):
    """Where Toycloud's telemetry service keeps GPU utilisation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: str = "toy_gpu_busy"
    """Telemetry metric with GPU utilisation, percent, one series per GPU."""
    resolution_seconds: int = Field(default=60, ge=10, le=3600)
    """Telemetry's point spacing."""


METRICS = NativeMetrics(ToyMetrics, IdMatch.INSTANCE_ID)
