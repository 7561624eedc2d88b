"""The policy's ``idle.metrics`` section: where each cloud's GPU utilisation, GPU memory
and CPU are read from, and the optional Prometheus that replaces them all. Each section
is a metrics source's settings (``usecases.metrics_sources``).

A cloud's own monitoring (``idle.metrics.<cloud>``) is not a field here: its registry
entry names the section's model (built-in clouds too, as for ``scope.<cloud>``), and the
registry calls :func:`register_section`. Such a section is present with its defaults
when the policy does not write it, so a cloud's adapter always has its metric names."""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    PrivateAttr,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidatorFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from gpuplan.core.policy.fields import HttpUrl
from gpuplan.core.policy.section import OpenSection, Section, split_registered

_REGISTERED: dict[str, type[BaseModel]] = {}
"""``idle.metrics.<name>`` sections that registry entries add, by name, in order."""
_DEFAULTED: set[str] = set()
"""Those of them present with their defaults when the policy does not write them."""


def register_section(name: str, model: type[BaseModel], *, defaulted: bool = False) -> None:
    """Accept ``idle.metrics.<name>``, checked by ``model`` (the registries call this for
    a cloud's own monitoring and for a source whose section is not a field of
    :class:`MetricsSettings`). ``defaulted``: absent from a policy, the section is
    ``model()`` (a cloud's own monitoring: every key has a default); else it is unset."""
    _REGISTERED[name] = model
    if defaulted:
        _DEFAULTED.add(name)
    else:
        _DEFAULTED.discard(name)


def unregister_section(name: str) -> None:
    """Stop accepting ``idle.metrics.<name>`` (a source or cloud a test registered)."""
    _REGISTERED.pop(name, None)
    _DEFAULTED.discard(name)


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

    # Each cloud's own monitoring (idle.metrics.<cloud>) is checked by the model its
    # registry entry names, built in or not; any other unknown key stays an error.

    prometheus: PrometheusMetrics | None = None
    """When set, every provider's utilisation comes from this Prometheus."""
    _registered: dict[str, BaseModel] = PrivateAttr(default_factory=dict)

    @model_validator(mode="wrap")
    @classmethod
    def _registered_sources(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """``idle.metrics.<name>`` of a source a registry entry adds is checked by its
        settings model; any other unknown key stays an error."""
        settings, sections = split_registered(cls, data, handler, _REGISTERED.get)
        for name, model in _REGISTERED.items():
            if name in sections:
                settings._registered[name] = sections[name]
            elif name in _DEFAULTED and name not in settings._registered:
                settings._registered[name] = model()
        return settings

    @model_serializer(mode="wrap")
    def _with_sections(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        """The registered sections first (in registration order), then the other keys."""
        dumped: dict[str, Any] = handler(self)
        mode = "json" if info.mode_is_json() else "python"
        sections = {k: v.model_dump(mode=mode) for k, v in self._registered.items()}
        return {**sections, **dumped}

    @classmethod
    def registered_models(cls) -> dict[str, type[BaseModel]]:
        return dict(_REGISTERED)

    def section(self, name: str) -> BaseModel | None:
        """The settings of source ``name`` (``prometheus``, a cloud's own monitoring, a
        registered one); None when the policy does not set it."""
        if name in type(self).model_fields:
            found: BaseModel | None = getattr(self, name)
            return found
        return self._registered.get(name)


def registered_sections() -> dict[str, type[BaseModel]]:
    """The ``idle.metrics.<name>`` sections registry entries added, by name."""
    return dict(_REGISTERED)


def defaulted_sections() -> frozenset[str]:
    """The registered sections present with their defaults when a policy omits them."""
    return frozenset(_DEFAULTED)
