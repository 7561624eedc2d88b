"""The example policies pass, the checked-in JSON Schema is current, ``show`` fills defaults."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.catalog.offers import PricingModel
from gpuplan.usecases.policy import load_policy, policy_schema_text
from tests.fakes.policy_fixtures import VALID

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = sorted((ROOT / "policies").glob("*.yaml"))


def test_there_are_three_examples() -> None:
    names = {p.name for p in EXAMPLES}
    assert {"research-spot.yaml", "deadline-reserved.yaml", "notify-only.yaml"} <= names


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_passes_check(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["policy", "check", str(path)]) == 0
    assert ": ok (policy " in capsys.readouterr().out


def test_examples_say_what_the_planner_needs() -> None:
    research = load_policy(ROOT / "policies" / "research-spot.yaml")
    assert research.planning.allowed_gpus == ["H100", "A100-80GB", "L4"]
    assert PricingModel.SPOT in research.planning.allowed_pricing
    deadline = load_policy(ROOT / "policies" / "deadline-reserved.yaml")
    assert deadline.planning.allowed_pricing == [PricingModel.RESERVED_1Y, PricingModel.ON_DEMAND]
    assert deadline.idle.window_minutes == 180  # written "3h"
    assert deadline.idle.notice_minutes == 120
    cautious = load_policy(ROOT / "policies" / "notify-only.yaml")
    assert cautious.idle.action.value == "notify"


def test_schema_file_is_current() -> None:
    checked_in = (ROOT / "policies" / "policy.schema.json").read_text(encoding="utf-8")
    assert checked_in == policy_schema_text(), "run: python scripts/gen_policy_schema.py"


def test_docs_reference_is_current() -> None:
    from gpuplan.usecases.policy_docs import splice_reference

    docs = (ROOT / "docs" / "policy.md").read_text(encoding="utf-8")
    assert docs == splice_reference(docs), "run: python scripts/gen_policy_schema.py"
    assert "| `threshold_percent` | number 0-100 | `5.0` |" in docs


def test_schema_script_check_mode_passes() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_policy_schema.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_schema_is_closed_and_documented() -> None:
    schema = json.loads(policy_schema_text())
    for name, definition in schema["$defs"].items():
        if definition.get("type") == "object":
            assert definition.get("additionalProperties") is False, name
            assert definition.get("description"), name
    idle = schema["$defs"]["IdleSettings"]["properties"]
    assert set(idle) == {
        "threshold_percent",
        "window_minutes",
        "period_minutes",
        "min_coverage_percent",
        "grace_minutes",
        "notice_minutes",
        "action",
        "allow_data_loss",
        "exempt_tag",
        "max_actions_per_run",
        "breaker_percent",
        "breaker_min_actions",
        "metrics",
        "live_process_window_minutes",
        "gpu_memory_floor_percent",
        "cpu_busy_percent",
        "fault_hold_minutes",
    }
    assert "busiest GPU" in idle["threshold_percent"]["description"]
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["version", "name"]


def test_show_fills_defaults_and_redacts_webhook(
    write_policy: Callable[[str | bytes, str], Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TEAM_HOOK", "https://hooks.example.org/services/SECRET123")
    path = write_policy(
        VALID
        + "  window_minutes: 2h\n  allow_data_loss: false\n"
        + "notify: {webhook_url: '${TEAM_HOOK}'}\nenv_allow: [TEAM_HOOK]\n",
        "p.yaml",
    )
    assert main(["policy", "show", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    data = json.loads(out)
    assert "SECRET123" not in out
    assert data["notify"]["webhook_url"] == "https://hooks.example.org/..."
    assert data["idle"]["window_minutes"] == 120
    assert data["idle"]["period_minutes"] == 5
    assert data["idle"]["metrics"]["aws"] == {
        "namespace": "CWAgent",
        "metric": "nvidia_smi_utilization_gpu",
        "memory_used_metric": "nvidia_smi_memory_used",
        "memory_total_metric": "nvidia_smi_memory_total",
        "cpu_namespace": "AWS/EC2",
        "cpu_metric": "CPUUtilization",
    }
    assert data["budget"]["monthly_usd"] == 1000
    assert data["budget"]["alert_at_percent"] == [50, 80, 100]
    assert data["planning"] == {"allowed_gpus": [], "allowed_pricing": [], "allowed_regions": []}


def test_show_yaml_round_trips_through_check(
    write_policy: Callable[[str | bytes, str], Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = write_policy(VALID + "  allow_data_loss: false\n", "p.yaml")
    assert main(["policy", "show", str(path)]) == 0
    shown = capsys.readouterr().out
    again = write_policy(shown, "shown.yaml")
    assert main(["policy", "check", str(again)]) == 0


def test_show_of_broken_file_exits_2(
    write_policy: Callable[[str | bytes, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_policy(VALID.replace("version: 1", "version: 3"), "p.yaml")
    assert main(["policy", "show", str(path)]) == 2
    assert f"{path}:1:10: version: unsupported policy version 3" in capsys.readouterr().err
