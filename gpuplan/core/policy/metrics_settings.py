"""The policy's ``idle.metrics`` section: where each cloud's GPU utilisation, GPU memory
and CPU are read from, and the optional Prometheus that replaces them all. Each section
is a metrics source's settings (``usecases.metrics_sources``)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, PrivateAttr, ValidatorFunctionWrapHandler, model_validator

from gpuplan.core.policy.fields import HttpUrl
from gpuplan.core.policy.section import OpenSection, Section, split_registered

_REGISTERED: dict[str, type[BaseModel]] = {}
"""``idle.metrics.<name>`` sections that metrics registry entries add, by name."""


def register_section(name: str, model: type[BaseModel]) -> None:
    """Accept ``idle.metrics.<name>``, checked by ``model`` (the metrics registry calls
    this for an entry whose section is not a field of :class:`MetricsSettings`)."""
    _REGISTERED[name] = model


def unregister_section(name: str) -> None:
    """Stop accepting ``idle.metrics.<name>`` (a source a test registered)."""
    _REGISTERED.pop(name, None)


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


class GcpMetrics(Section):
    """The Cloud Monitoring metric with GPU utilisation (Ops Agent)."""

    metric_type: str = "agent.googleapis.com/gpu/utilization"
    """Metric type; one series per GPU (label ``gpu_number``) per ``gce_instance``."""
    memory_used_type: str = "agent.googleapis.com/gpu/memory/bytes_used"
    """GPU memory in use, bytes, per GPU; label ``memory_state`` ``used``/``free``."""
    cpu_type: str = "compute.googleapis.com/instance/cpu/utilization"
    """Instance CPU utilisation, a fraction 0-1."""


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


class PrometheusMetrics(Section):
    """A Prometheus with dcgm-exporter data; when set, used for every provider."""

    url: HttpUrl
    """Base URL of the Prometheus HTTP API, e.g. ``http://prometheus:9090`` (may hold
    ``${GPUPLAN_...}``; credentials in it are never printed or stored)."""
    metric: str = "DCGM_FI_DEV_GPU_UTIL"
    """dcgm-exporter metric with GPU utilisation in percent, one series per GPU."""
    memory_used_metric: str = "DCGM_FI_DEV_FB_USED"
    """dcgm-exporter framebuffer memory in use (MiB), one series per GPU."""
    memory_free_metric: str = "DCGM_FI_DEV_FB_FREE"
    """dcgm-exporter framebuffer memory free (MiB); used + free is the total."""
    cpu_metric: str = "node_cpu_seconds_total"
    """node_exporter CPU counter (per core and ``mode``); CPU percent is 100 x (1 - idle
    rate), averaged per instance. Its series must carry ``instance_label`` too."""
    instance_label: str = "instance_id"
    """The label that carries the cloud instance id (AWS ``i-...``, GCP numeric id, Azure
    ``vmId`` or resource id); names are never matched: they are not unique across scopes."""


class MetricsSettings(OpenSection):
    """Where GPU utilisation is read from, per provider."""

    aws: AwsMetrics = Field(default_factory=AwsMetrics)
    gcp: GcpMetrics = Field(default_factory=GcpMetrics)
    azure: AzureMetrics = Field(default_factory=AzureMetrics)
    prometheus: PrometheusMetrics | None = None
    """When set, every provider's utilisation comes from this Prometheus."""
    _registered: dict[str, BaseModel] = PrivateAttr(default_factory=dict)

    @model_validator(mode="wrap")
    @classmethod
    def _registered_sources(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """``idle.metrics.<name>`` of a source a registry entry adds is checked by its
        settings model; any other unknown key stays an error."""
        settings, sections = split_registered(cls, data, handler, _REGISTERED.get)
        settings._registered.update(sections)
        return settings

    @classmethod
    def registered_models(cls) -> dict[str, type[BaseModel]]:
        return dict(_REGISTERED)

    def section(self, name: str) -> BaseModel | None:
        """The settings of source ``name`` (``aws``, ``prometheus``, a registered one)."""
        if name in type(self).model_fields:
            found: BaseModel | None = getattr(self, name)
            return found
        return self._registered.get(name)


def registered_sections() -> dict[str, type[BaseModel]]:
    """The ``idle.metrics.<name>`` sections registry entries added, by name."""
    return dict(_REGISTERED)
