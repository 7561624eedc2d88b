"""``gpuplan estimate --policy``: planning and budget sections honoured with no cloud call."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpuplan.cli.main import main
from gpuplan.core.audit.budget import month_key
from gpuplan.ledger import Ledger
from gpuplan.ledger.store import SpendRecord

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "policies").glob("*.yaml"))


def estimate_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["estimate", "--params", "7B", "--tokens", "500B", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("policy", ["research-spot.yaml", "deadline-reserved.yaml"])
def test_only_allowed_options_are_returned(
    policy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    path = REPO / "policies" / policy
    rules = yaml.safe_load(path.read_text())
    code, plan = estimate_json(
        capsys, "--policy", str(path), "--db", str(tmp_path / "l.db"), "--show-infeasible"
    )
    assert code == 0
    assert plan["options"], "the example policy should allow some option for a 7B model"
    planning, budget = rules["planning"], rules["budget"]
    for option in plan["options"]:
        assert option["gpu"] in planning["allowed_gpus"]
        assert option["pricing"] in planning["allowed_pricing"]
        assert option["region"] in planning["allowed_regions"]
        assert option["hourly_usd"] <= budget["max_hourly_usd"]
        # a month of the job (all of it when shorter) stays inside the monthly budget
        assert option["cost_usd"] * 730 / max(option["hours"], 730) <= budget["monthly_usd"]
    reasons = [r for o in plan["infeasible"] for r in o["reasons"]]
    label = f"policy {rules['name']} ({path})"
    assert any(r.startswith(label) and "not allowed" in r for r in reasons)
    assert any("remaining monthly budget: whole budget" in a for a in plan["assumptions"])
    assert not (tmp_path / "l.db").exists(), "estimate must not create a ledger"


def test_recorded_spend_shrinks_the_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = REPO / "policies" / "research-spot.yaml"
    db = tmp_path / "ledger.db"
    now = datetime.now(UTC)
    ledger = Ledger.open(db)
    ledger.record_spend(
        SpendRecord(
            policy="research-team",
            month=month_key(now),
            recorded_at=now,
            month_to_date_usd=Decimal("79000"),
            forecast_usd=Decimal("90000"),
            monthly_usd=Decimal("80000"),
            instances=3,
        )
    )
    ledger.close()
    code, plan = estimate_json(capsys, "--policy", str(path), "--db", str(db))
    assert code == 1
    assert plan["options"] == []
    assert any(
        "over the policy's remaining budget this month ($1,000.00)" in r
        for o in plan["infeasible"]
        for r in o["reasons"]
    )
    assert any("minus the month's last recorded spend 79000" in a for a in plan["assumptions"])


def test_broken_policy_is_exit_2_and_plans_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nname: x\nplanning:\n  allowed_gpus: [H1000]\n")
    code = main(["estimate", "--params", "7B", "--tokens", "1T", "--policy", str(bad)])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.out == ""
    assert f"{bad}:4" in captured.err and "H100" in captured.err
