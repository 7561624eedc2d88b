"""The policy's ``idle.metrics.gcp``: the Cloud Monitoring metrics the cloud's adapter reads.

Where the cloud's own monitoring has each instance's GPU utilisation, GPU memory and CPU.

The cloud's registry entry names the model (:data:`METRICS`); the registry makes it the
section ``idle.metrics.gcp``, present with these defaults when a policy omits it. The
adapter's metric-name defaults are read from here (written once).

Pydantic only (no SDK): policies are checked without the SDK.
"""

from __future__ import annotations

from gpuplan.core.policy.section import Section
from gpuplan.providers.cloud_entry import IdMatch, NativeMetrics


class GcpMetrics(Section):
    """The Cloud Monitoring metric with GPU utilisation (Ops Agent)."""

    metric_type: str = "agent.googleapis.com/gpu/utilization"
    """Metric type; one series per GPU (label ``gpu_number``) per ``gce_instance``."""
    memory_used_type: str = "agent.googleapis.com/gpu/memory/bytes_used"
    """GPU memory in use, bytes, per GPU; label ``memory_state`` ``used``/``free``."""
    cpu_type: str = "compute.googleapis.com/instance/cpu/utilization"
    """Instance CPU utilisation, a fraction 0-1."""


METRICS = NativeMetrics(GcpMetrics, IdMatch.INSTANCE_ID)
"""The cloud's own monitoring: its section's model and how a series is tied to an instance."""
