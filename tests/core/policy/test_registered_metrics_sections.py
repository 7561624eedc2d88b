"""Each cloud's ``idle.metrics.<cloud>`` is a registered section (from its registry entry),
not a field: present with its defaults when omitted, kept when a settings value is
passed on, dumped first in registration order (``policy show`` unchanged)."""

from __future__ import annotations

from gpuplan.core.policy import IdleSettings, MetricsSettings, Policy
from gpuplan.usecases.clouds import registry as cloud_registry


def _native() -> list[str]:
    return [e.provider.value for e in cloud_registry.entries() if e.metrics is not None]


def test_no_cloud_is_a_field_and_every_native_section_is_registered() -> None:
    assert list(MetricsSettings.model_fields) == ["prometheus"]
    assert list(MetricsSettings.registered_models())[: len(_native())] == _native()


def test_omitted_sections_take_their_defaults_and_dump_first() -> None:
    policy = Policy.model_validate({"version": 1, "name": "x"})
    dumped = policy.model_dump(mode="json")["idle"]["metrics"]
    assert list(dumped) == [*_native(), "prometheus"]
    for name in _native():
        section = policy.idle.metrics.section(name)
        assert section is not None and dumped[name] == type(section)().model_dump(mode="json")


def test_a_settings_value_passed_on_keeps_its_sections() -> None:
    name = _native()[0]
    model = MetricsSettings.registered_models()[name]
    key = next(iter(model.model_fields))
    metrics = MetricsSettings.model_validate({name: {key: "written"}})
    idle = IdleSettings(metrics=metrics)
    assert getattr(idle.metrics.section(name), key) == "written"
    again = Policy.model_validate({"version": 1, "name": "x", "idle": idle.model_dump()})
    assert getattr(again.idle.metrics.section(name), key) == "written"
