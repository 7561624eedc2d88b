"""``fleet`` and ``audit`` show exempt dollars per hour and who holds them (--json and text).

The fleet is the fake-fleet file (``GPUPLAN_FAKE_FLEET``); exemption dates are written
relative to today, since the CLI reads the real clock.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gpuplan.cli.main import main

TODAY = datetime.now(UTC).date()


def machine(iid: str, keep: str | None, owner: str | None, *, state: str = "running",
            price: str = "55.04") -> dict[str, Any]:  # fmt: skip
    labels = {k: v for k, v in (("gpuplan-keep", keep), ("owner", owner)) if v is not None}
    return {"provider": "aws", "account": "1", "region": "us-east-1", "instance_id": iid,
            "instance_type": "p5.48xlarge", "state": state, "gpu": "H100", "gpu_count": 8,
            "started_at": (datetime.now(UTC) - timedelta(days=2)).isoformat(),
            "hourly_usd": price, "labels": labels}  # fmt: skip


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    soon = (TODAY + timedelta(days=10)).isoformat()
    far = (TODAY + timedelta(days=300)).isoformat()
    gone = (TODAY - timedelta(days=1)).isoformat()
    rows = [
        machine("i-ml-1", soon, "ml"),
        machine("i-ml-2", f"5d@{TODAY.isoformat()}", "ml", price="1.006"),
        machine("i-vision", far, "vision"),  # too long: exempt until its notice runs out
        machine("i-orphan", soon, None, price="12.29"),
        machine("i-expired", gone, "ml"),
        machine("i-stopped", soon, "ml", state="stopped"),
        machine("i-plain", None, "ml"),
    ]
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps({"instances": rows, "utilisation_percent": {}}), encoding="utf-8")
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(path))
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "version: 1\nname: t\nscope:\n  aws: {regions: [us-east-1]}\n"
        "idle: {allow_data_loss: false}\nexemptions: {max_days: 30}\nowners: {tag: owner}\n",
        encoding="utf-8",
    )
    return policy


def test_fleet_json_lists_each_exemption_and_the_dollars_per_holder(
    fleet: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fleet", "--policy", str(fleet), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    states = {r["instance_id"]: (r["exemption"] or {}).get("state") for r in data["instances"]}
    assert states == {
        "i-ml-1": "valid",
        "i-ml-2": "valid",
        "i-vision": "too_long",
        "i-orphan": "valid",
        "i-expired": "expired",
        "i-stopped": "valid",
        "i-plain": None,
    }
    exempt = data["exempt"]
    assert exempt["usd_per_hour"] == 123.376  # 55.04 + 1.006 + 55.04 + 12.29
    assert exempt["instances"] == 4
    assert [(h["holder"], h["instances"], h["usd_per_hour"]) for h in exempt["by_holder"]] == [
        ("ml", 2, 56.046),
        ("vision", 1, 55.04),
        ("(no owner)", 1, 12.29),
    ]


def test_fleet_and_audit_text_say_the_exempt_dollars(
    fleet: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["fleet", "--policy", str(fleet)]) == 0
    out = capsys.readouterr().out
    assert "Exempt: $123.38/h on 4 running instances (ml $56.05/h x2, vision $55.04/h x1," in out
    code = main(["audit", "--policy", str(fleet), "--json", "--db", str(tmp_path / "l.db")])
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    assert json.loads(captured.out)["exempt"]["instances"] == 4
