"""GPU specifications and name resolution.

A :class:`GpuTable` maps every spelling people use (``h100-sxm``, ``nvidia-h100-80gb``,
GCP's ``nvidia-tesla-a100``) to exactly one canonical name. ``H100`` is the SXM 80 GB
part and never silently includes the PCIe or NVL parts. The table and the
:class:`Precision` enum live in pydantic-free modules (:mod:`gpuplan.core.catalog.gpu_names`,
:mod:`gpuplan.core.catalog.kinds`) and are re-exported here. :class:`GpuSpec` is a plain frozen
dataclass: the fast reader builds it directly, the validated reader through a pydantic
``TypeAdapter`` (see :mod:`gpuplan.core.catalog.offers`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from gpuplan.core.catalog.gpu_names import AMBIGUOUS, GpuTable, normalize_gpu_name
from gpuplan.core.catalog.kinds import Precision

__all__ = ["AMBIGUOUS", "GpuSpec", "GpuTable", "Precision", "normalize_gpu_name"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuSpec:
    """One GPU model. TFLOP/s figures are dense peaks; None where the GPU has no such path."""

    __pydantic_config__: ClassVar[dict[str, str]] = {"extra": "forbid"}

    name: str
    """Canonical name, e.g. ``H100`` (SXM 80 GB)."""
    vendor: str
    architecture: str
    launch_year: int
    form_factor: str
    memory_gb: float
    """Memory per GPU, GB."""
    memory_bandwidth_tbs: float
    """Memory bandwidth per GPU, TB/s."""
    fp32_tflops: float | None = None
    tf32_tflops: float | None = None
    bf16_tflops: float | None = None
    fp16_tflops: float | None = None
    fp8_tflops: float | None = None
    fp4_tflops: float | None = None
    bf16_matmul_tflops: float | None = None
    """Measured maximum achievable bf16 matmul TFLOP/s (MAMF), where published."""
    interconnect: str
    """GPU-to-GPU link inside a node."""
    interconnect_gbs: float | None = None
    """GPU-to-GPU bandwidth per GPU, GB/s (bidirectional); None for PCIe-only parts."""
    nvlink_domain: int | None = None
    """GPUs one NVLink domain joins when it spans more than one node (72 in a GB200/GB300
    NVL72 rack of 4-GPU trays); None: the node is the domain (HGX, OAM, PCIe)."""
    aliases: tuple[str, ...] = ()
    source: str

    def peak_tflops(self, precision: Precision) -> float | None:
        """Dense peak TFLOP/s at ``precision``, or None when the GPU lacks it."""
        value: float | None = getattr(self, f"{precision.value}_tflops")
        return value
