"""Issue 15's probes on the new seam: problems travel up, Prometheus keeps reservation
awareness, ``fleet`` and ``budget`` agree to the cent."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from botocore.stub import Stubber
from freezegun import freeze_time

from gpuplan.cli.main import main
from gpuplan.core.policy import Policy
from gpuplan.providers.base import ReservationAware
from gpuplan.usecases.audit.savings import reserved_pairs
from gpuplan.usecases.clouds.adapters import build_adapters
from tests.fakes.aws_world import NOW, World
from tests.fakes.http import serve
from tests.fakes.prometheus import PrometheusFake


def test_snooze_with_a_broken_aws_profile_reports_the_credential_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], aws_env: None
) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "version: 1\nname: p\nscope: {aws: {regions: [us-east-1], profile: nowhere}}\n"
        "idle: {allow_data_loss: false}\n",
        encoding="utf-8",
    )
    code = main(["snooze", "--policy", str(path), "i-0abc", "--for", "1h"])
    err = capsys.readouterr().err
    assert code == 1
    assert "nowhere" in err and "could not be found" in err
    assert "not a GPU instance in the policy's scope" not in err


def test_prometheus_metrics_keep_reservation_awareness(world: World) -> None:
    iid = world.launch(tags={"team": "research"})
    fake = PrometheusFake()
    with serve(fake) as url:
        policy = Policy.model_validate(
            {
                "version": 1,
                "name": "p",
                "scope": {"aws": {"regions": ["us-east-1"]}},
                "idle": {"metrics": {"prometheus": {"url": url}}},
            }
        )
        fleet = build_adapters(policy, None, {})
        (adapter,) = fleet.adapters
        assert isinstance(adapter, ReservationAware)
        # moto lacks DescribeReservedInstances: a Stubber answers it on the adapter's client.
        with Stubber(adapter._ec2) as stub:  # type: ignore[attr-defined]
            stub.add_response(
                "describe_reserved_instances",
                {"ReservedInstances": [{"InstanceType": "p5.48xlarge", "State": "active"}]},
            )
            assert reserved_pairs(fleet.adapters) == ({("us-east-1", "p5.48xlarge")}, [])
        (inst,) = adapter.list_instances()
        assert inst.instance_id == iid
        adapter.fetch_utilisation([inst], start=NOW, end=NOW, period_minutes=5)
        # Utilisation, GPU memory used/free and CPU asked of Prometheus, not CloudWatch.
        assert fake.calls["query_range"] == 4


FLEET = [
    {
        "provider": "aws", "account": "123456789012", "region": "us-east-1",
        "instance_id": "i-0p5", "instance_type": "p5.48xlarge", "state": "running",
        "started_at": "2026-12-01T03:17:41.123456Z", "labels": {"team": "research"},
        "gpu": "H100", "gpu_count": 8, "hourly_usd": "55.04",
    },
    {
        "provider": "aws", "account": "123456789012", "region": "us-east-1",
        "instance_id": "i-0g5", "instance_type": "g5.xlarge", "state": "running",
        "started_at": "2026-11-20T00:00:00Z", "labels": {"team": "research"},
        "gpu": "A10G", "gpu_count": 1, "hourly_usd": "1.006",
    },
]  # fmt: skip


def test_fleet_and_budget_agree_to_the_cent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fleet_file = tmp_path / "fleet.json"
    fleet_file.write_text(json.dumps(FLEET), encoding="utf-8")
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(fleet_file))
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "version: 1\nname: p\nscope: {aws: {regions: [us-east-1]}}\n"
        "idle: {allow_data_loss: false}\n"
    )
    db = str(tmp_path / "l.db")
    with freeze_time(datetime(2026, 12, 2, 10, 15, 7, 654321, tzinfo=UTC)):
        main(["fleet", "--policy", str(policy), "--json"])
        fleet: Any = json.loads(capsys.readouterr().out)
        main(["budget", "--policy", str(policy), "--json", "--db", db])
        budget: Any = json.loads(capsys.readouterr().out)
    in_fleet = {i["instance_id"]: i["month_to_date_usd"] for i in fleet["instances"]}
    in_budget = {i["instance_id"]: i["cost_usd"] for i in budget["instances"]}
    assert in_fleet == in_budget
    # 30 h 57 min 26.530865 s at $55.04/h, rounded once, at the end (not hours first).
    hours = Decimal("111446.530865") / 3600
    assert in_fleet["i-0p5"] == float((hours * Decimal("55.04")).quantize(Decimal("0.01")))
    assert round(sum(in_fleet.values()), 2) == budget["month_to_date_usd"]
