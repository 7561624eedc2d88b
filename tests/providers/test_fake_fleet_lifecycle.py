"""The in-memory fake as a lifecycle provider, and GPUPLAN_FAKE_FLEET through the CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.instances import Action, Capability, InstanceState
from gpuplan.providers.base import CloudAdapter, ProviderError
from gpuplan.providers.fake import fake_providers


def _fleet_file(tmp_path: Path) -> Path:
    started = (datetime.now(UTC) - timedelta(hours=5)).isoformat()
    common = {
        "provider": "aws", "account": "123456789012", "region": "us-east-1",
        "instance_type": "g5.xlarge", "state": "running", "started_at": started,
        "gpu": "A10G", "gpu_count": 1, "hourly_usd": "1.006",
        "risk": {"spot_one_time": False},
    }  # fmt: skip
    data = {
        "instances": [
            {**common, "instance_id": "i-0idle", "labels": {"team": "research"}},
            {**common, "instance_id": "i-0busy", "labels": {"team": "research"}},
            {**common, "instance_id": "i-0dark", "labels": {"team": "research"}},
        ],
        "utilisation_percent": {"i-0idle": 0.5, "i-0busy": 90},
    }
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _policy(tmp_path: Path) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(
        "version: 1\nname: research-team\nscope:\n  aws: {regions: [us-east-1]}\n"
        "  match_labels: {team: research}\nidle: {allow_data_loss: false}\n",
        encoding="utf-8",
    )
    return path


def test_fake_is_a_lifecycle_provider_and_acts_on_its_state(tmp_path: Path) -> None:
    (fake,) = fake_providers(_fleet_file(tmp_path), [Provider.AWS])
    assert isinstance(fake, CloudAdapter)
    assert Capability.STOP in fake.capabilities
    (idle,) = [i for i in fake.list_instances() if i.instance_id == "i-0idle"]
    end = datetime(2026, 12, 2, 12, tzinfo=UTC)
    samples = fake.fetch_utilisation(
        fake.list_instances(), start=end - timedelta(hours=1), end=end, period_minutes=5
    )
    assert set(samples) == {"i-0idle", "i-0busy"}
    assert len(samples["i-0idle"].utilisation["0"]) == 12
    assert fake.act(idle, Action.STOP) is InstanceState.STOPPED
    fake.tag(idle, {"gpuplan-reason": "idle-60m-lt5pct"})
    fake.untag(idle, ["team"])
    again = fake.refresh(idle)
    assert again.state is InstanceState.STOPPED
    assert again.labels == {"gpuplan-reason": "idle-60m-lt5pct"}
    assert [c.method for c in fake.calls][-4:] == ["stop", "tag", "untag", "refresh"]
    fake.failures["stop"] = "throttled"
    with pytest.raises(ProviderError, match="throttled"):
        fake.act(idle, Action.STOP)


def test_stop_idle_on_the_fake_fleet_dry_run_then_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(_fleet_file(tmp_path)))
    argv = ["stop-idle", "--policy", str(_policy(tmp_path)), "--db", str(tmp_path / "l.db")]
    assert main([*argv, "--json"]) == 0
    verdicts = {d["instance_id"]: d for d in json.loads(capsys.readouterr().out)["decisions"]}
    assert verdicts["i-0idle"]["verdict"] == "idle"
    assert verdicts["i-0idle"]["action"] == "none"
    assert verdicts["i-0busy"]["verdict"] == "busy"
    assert verdicts["i-0dark"]["verdict"] == "unknown"
    assert main([*argv, "--apply", "--json"]) == 0
    applied = {d["instance_id"]: d for d in json.loads(capsys.readouterr().out)["decisions"]}
    assert applied["i-0idle"]["action"] == "stopped"
    assert applied["i-0busy"]["action"] == "none"
    assert applied["i-0dark"]["action"] == "none"
