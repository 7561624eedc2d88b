"""The in-memory provider: implements the Protocol, records calls, reads a fleet file."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.errors import DataError
from gpuplan.core.lifecycle.instances import Capability, GpuInstance, InstanceState
from gpuplan.providers.base import CloudProvider
from gpuplan.providers.fake import FakeAdapter, load_fake_fleet


def instance(provider: Provider, instance_id: str, **extra: object) -> GpuInstance:
    fields: dict[str, object] = {
        "provider": provider,
        "account": "acct",
        "region": "us-east-1",
        "instance_id": instance_id,
        "instance_type": "g6.xlarge",
        "state": InstanceState.RUNNING,
        "started_at": datetime(2026, 12, 1, tzinfo=UTC),
    }
    fields.update(extra)
    return GpuInstance.model_validate(fields)


def test_fake_is_a_cloud_provider_and_lists_its_own_cloud_only() -> None:
    fake = FakeAdapter(Provider.AWS, [instance(Provider.AWS, "i-1"), instance(Provider.GCP, "42")])
    assert isinstance(fake, CloudProvider)
    assert fake.provider is Provider.AWS
    assert fake.capabilities == frozenset({Capability.LIST})
    assert [i.instance_id for i in fake.list_instances()] == ["i-1"]
    fake.list_instances()
    assert len(fake.calls_to("list_instances")) == 2


def test_injected_failure_raises_provider_error_and_is_recorded() -> None:
    from gpuplan.providers.base import ProviderError

    fake = FakeAdapter(Provider.AWS, [instance(Provider.AWS, "i-1")])
    fake.failures["list_instances"] = "us-east-1: throttled"
    with pytest.raises(ProviderError, match="throttled"):
        fake.list_instances()
    assert len(fake.calls_to("list_instances")) == 1


def test_fleet_file_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "fleet.json"
    path.write_text(
        json.dumps(
            [
                {
                    "provider": "aws",
                    "account": "1",
                    "region": "us-east-1",
                    "instance_id": "i-1",
                    "instance_type": "p5.48xlarge",
                    "state": "running",
                    "started_at": "2026-12-01T00:00:00Z",
                    "hourly_usd": "55.04",
                }
            ]
        )
    )
    [loaded] = load_fake_fleet(path)
    assert loaded.hourly_usd == Decimal("55.04")
    assert loaded.started_at == datetime(2026, 12, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"a": 1}', "expected a list of instances"),
        ('[{"provider": "aws"}]', "[0].account"),
        (
            '[{"provider": "ibm", "account": "1", "region": "r", "instance_id": "i",'
            ' "instance_type": "t", "state": "running"}]',
            "[0].provider",
        ),
    ],
)
def test_bad_fleet_file_is_a_data_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "fleet.json"
    path.write_text(content)
    with pytest.raises(DataError, match=message.replace("[", r"\[").replace(".", r"\.")):
        load_fake_fleet(path)
    with pytest.raises(DataError, match="file not found"):
        load_fake_fleet(tmp_path / "missing.json")
