"""The policy's ``idle.metrics.aws``: the CloudWatch metrics the cloud's adapter reads.

Where the cloud's own monitoring has each instance's GPU utilisation, GPU memory and CPU.

The cloud's registry entry names the model (:data:`METRICS`); the registry makes it the
section ``idle.metrics.aws``, present with these defaults when a policy omits it. The
adapter's metric-name defaults are read from here (written once).

Pydantic only (no SDK): policies are checked without the SDK.
"""

from __future__ import annotations

from gpuplan.core.policy.section import Section
from gpuplan.providers.cloud_entry import IdMatch, NativeMetrics


class AwsMetrics(Section):
    """Where the CloudWatch agent publishes GPU utilisation."""

    namespace: str = "CWAgent"
    """CloudWatch namespace the agent publishes to."""
    metric: str = "nvidia_smi_utilization_gpu"
    """Metric name; per GPU, dimensions ``InstanceId``, ``index``, ``name``, ``host``."""
    memory_used_metric: str = "nvidia_smi_memory_used"
    """Agent metric with GPU memory in use (MiB), per GPU like ``metric``."""
    memory_total_metric: str = "nvidia_smi_memory_total"
    """Agent metric with each GPU's total memory (MiB)."""
    cpu_namespace: str = "AWS/EC2"
    """Namespace of the instance CPU metric (EC2 basic monitoring: 5-minute points)."""
    cpu_metric: str = "CPUUtilization"
    """Instance CPU utilisation, percent, dimension ``InstanceId``."""


METRICS = NativeMetrics(AwsMetrics, IdMatch.INSTANCE_ID_OR_UNIQUE_HOST)
"""The cloud's own monitoring: its section's model and how a series is tied to an instance."""
