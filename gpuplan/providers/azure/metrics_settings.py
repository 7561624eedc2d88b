"""The policy's ``idle.metrics.azure``: the Azure Monitor metrics the cloud's adapter reads.

Where the cloud's own monitoring has each instance's GPU utilisation, GPU memory and CPU.

The cloud's registry entry names the model (:data:`METRICS`); the registry makes it the
section ``idle.metrics.azure``, present with these defaults when a policy omits it. The
adapter's metric-name defaults are read from here (written once).

Pydantic only (no SDK): policies are checked without the SDK.
"""

from __future__ import annotations

from gpuplan.core.policy.section import Section
from gpuplan.providers.cloud_entry import IdMatch, NativeMetrics


class AzureMetrics(Section):
    """The custom metric with GPU utilisation (Telegraf ``nvidia_smi``)."""

    namespace: str = "Telegraf/nvidia_smi"
    """Custom metric namespace (Azure has no platform GPU metric for VMs)."""
    metric: str = "utilization_gpu"
    """Metric name, one series per GPU."""
    memory_used_metric: str = "memory_used"
    """Telegraf ``nvidia_smi`` GPU memory in use (MiB), per GPU."""
    memory_total_metric: str = "memory_total"
    """Telegraf ``nvidia_smi`` GPU memory total (MiB), per GPU."""
    cpu_metric: str = "Percentage CPU"
    """Platform metric with the VM's CPU utilisation, percent."""


METRICS = NativeMetrics(AzureMetrics, IdMatch.INSTANCE_ID)
"""The cloud's own monitoring: its section's model and how a series is tied to an instance."""
