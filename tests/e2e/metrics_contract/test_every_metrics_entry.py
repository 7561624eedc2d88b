"""The contract every metrics registry entry keeps, run against each one's wire fake.

- every entry has a wire fake (``conftest.BENCHES``), and every bench an entry;
- every entry's settings model is its section of the policy (``idle.metrics.<name>``),
  and every section of ``idle.metrics`` is an entry; every cloud entry has its own
  monitoring registered;
- the source answers utilisation, GPU memory and CPU in ``HostSamples``' declared
  fields, each instance's own values under its own id, tied as the entry's ``matching``
  rule says (by id: ``matched_by`` stays empty).
"""

from __future__ import annotations

import typing

import pytest

from gpuplan.core.lifecycle.instances import HostSamples
from gpuplan.core.policy.models import MetricsSettings
from gpuplan.providers.cloud_entry import Service
from gpuplan.usecases.clouds.entries import ENTRIES
from gpuplan.usecases.clouds.metrics_sources import (
    MetricsEntry,
    SourceKind,
    metrics_entries,
    native_entry,
)
from tests.e2e.metrics_contract.conftest import BENCHES, Bench, Signals
from tests.fakes.scenarios import PERIODS

METRICS_ENTRIES = metrics_entries()
NAMES = [e.name for e in METRICS_ENTRIES]
QUIET = Signals("quiet", utilisation=2.0, memory_percent=40.0, cpu_percent=7.0)
WORKING = Signals("working", utilisation=60.0, memory_percent=20.0, cpu_percent=30.0)


def test_every_entry_has_a_wire_fake() -> None:
    assert sorted(BENCHES) == sorted(NAMES), "an entry without a wire fake, or a stale fake"


@pytest.mark.parametrize("entry", METRICS_ENTRIES, ids=NAMES)
def test_every_entry_is_its_policy_section(entry: MetricsEntry[typing.Any]) -> None:
    field = MetricsSettings.model_fields.get(entry.name)
    registered = MetricsSettings.registered_models().get(entry.name)
    assert (field is None) != (registered is None), f"idle.metrics.{entry.name}: one section"
    accepted = (
        {registered} if field is None else {field.annotation, *typing.get_args(field.annotation)}
    )
    assert entry.settings in accepted
    assert (entry.kind is SourceKind.NATIVE) == (entry.native_to is not None)


def test_every_policy_section_is_an_entry() -> None:
    sections = [*MetricsSettings.registered_models(), *MetricsSettings.model_fields]
    assert sorted(sections) == sorted(NAMES)


# A platform whose metrics service is Prometheus (Kubernetes: dcgm-exporter) reads them
# through the Prometheus source, not a monitoring service of its own.
@pytest.mark.parametrize(
    "cloud",
    [e for e in ENTRIES if not e.catalog_only and e.services.get(Service.METRICS) != "prometheus"],
    ids=lambda e: e.provider.value,
)
def test_every_cloud_has_its_own_monitoring_registered(cloud: typing.Any) -> None:
    assert native_entry(cloud.provider).kind is SourceKind.NATIVE


def _percent(series: typing.Mapping[typing.Any, float]) -> float:
    """The one flat value of a series over the published periods, to 0.1."""
    values = {round(v, 1) for t, v in series.items() if t in PERIODS}
    assert len(values) == 1, values
    return values.pop()


@pytest.mark.parametrize("entry_name", NAMES)
def test_signals_arrive_in_declared_fields_by_instance_id(entry_name: str, bench: Bench) -> None:
    ids = {s.name: bench.start(s) for s in (QUIET, WORKING)}
    instances, got = bench.read()
    assert {i.instance_id for i in instances} == set(ids.values())
    assert set(got) == set(ids.values()), "samples keyed by anything but the instance id"
    for signals in (QUIET, WORKING):
        samples = got[ids[signals.name]]
        assert isinstance(samples, HostSamples)
        assert samples.matched_by is None  # tied by id, not by host name
        assert list(samples.utilisation) == ["0"]
        assert _percent(samples.utilisation["0"]) == signals.utilisation
        assert _percent(samples.memory["0"]) == signals.memory_percent
        assert _percent(samples.cpu) == signals.cpu_percent
