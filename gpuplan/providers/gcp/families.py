"""GCP machine families that carry their GPUs: the one table every GCP path reads.

The machine type fixes the GPU model (and, from its ``-<n>g`` suffix or the G2 size,
the count). The same table names each family's Cloud Billing SKUs (host family and GPU
SKU, for ``catalog refresh``) and SkyPilot's GPU name (for the catalog import), so the
three can no longer disagree. Source: cloud.google.com/compute/docs/accelerator-optimized-machines
and cloud.google.com/compute/gpus-pricing (checked 2026-12-02).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class GcpFamily:
    prefix: str
    """Machine type prefix, e.g. ``a2-highgpu-``."""
    gpu: str
    """Canonical GPU name (as in the catalog)."""
    host_sku: str | None
    """The host family as Cloud Billing SKU descriptions name it; None: not priced by SKU."""
    gpu_sku: str
    """The GPU as Cloud Billing SKU descriptions name it."""
    skypilot_gpu: str | None
    """SkyPilot catalog's accelerator name; None: not in SkyPilot's catalog."""


FAMILIES: tuple[GcpFamily, ...] = (
    GcpFamily("a2-ultragpu-", "A100-80GB", "A2", "A100 80GB", "A100-80GB"),
    GcpFamily("a2-highgpu-", "A100-40GB", "A2", "A100", "A100"),
    GcpFamily("a2-megagpu-", "A100-40GB", "A2", "A100", "A100"),
    GcpFamily("a3-ultragpu-", "H200", "A3 Ultra", "H200 141GB", "H200"),
    GcpFamily("a3-highgpu-", "H100", "A3", "H100 80GB", "H100"),
    GcpFamily("a3-megagpu-", "H100", "A3 Mega", "H100 80GB Mega", "H100-MEGA"),
    GcpFamily("a3-edgegpu-", "H100", "A3", "H100 80GB", "H100"),
    GcpFamily("a4x-", "GB200", None, "", None),
    GcpFamily("a4-highgpu-", "B200", "A4", "B200", "B200"),
    GcpFamily("g2-standard-", "L4", "G2", "L4", "L4"),
)
G2_L4_COUNT = {4: 1, 8: 1, 12: 1, 16: 1, 32: 1, 24: 2, 48: 4, 96: 8}
"""G2 carries L4s; the count follows the size (vCPUs)."""
_GPU_SUFFIX = re.compile(r"-(\d+)g(?:-[a-z]+)?$")
"""``a3-highgpu-8g``, ``a3-ultragpu-8g-nolssd``: the GPU count."""
_G2 = re.compile(r"^g2-standard-(\d+)$")


def family_of(machine_type: str) -> GcpFamily | None:
    """The fixed-GPU family of a machine type, None for anything else (n1, e2 ...)."""
    return next((f for f in FAMILIES if machine_type.startswith(f.prefix)), None)


def fixed_gpu_count(machine_type: str) -> int:
    """GPUs a fixed-GPU machine type carries by its name; 0 when the name does not say."""
    g2 = _G2.match(machine_type)
    if g2:
        return G2_L4_COUNT.get(int(g2.group(1)), 0)
    match = _GPU_SUFFIX.search(machine_type)
    return int(match.group(1)) if match and family_of(machine_type) else 0
