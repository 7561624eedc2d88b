"""CLI answers to the first questions: cheapest per GPU, region groups, --top, exit 2 with
close matches for unknown regions and impossible counts, CSV text, one error prefix."""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.catalog.offers import Provider
from gpuplan.core.catalog.regions import (
    RegionGroup,
    expand_regions,
    provider_region_problem,
    region_group,
)
from gpuplan.loaders.paths import bundled_pricing_dir

BUNDLED = ["--catalog-dir", str(bundled_pricing_dir())]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main([*argv, *BUNDLED])
    out, err = capsys.readouterr()
    return code, out, err


def test_cheapest_h100_on_each_cloud(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["gpus", "--prices", "--gpu", "H100", "--per-cloud", "--include-stale", "--json"]
    code, out, _ = run(capsys, *argv)  # --include-stale: ranked by price whatever the day
    assert code == 0
    import json

    rows = json.loads(out)
    clouds = [r["provider"] for r in rows]
    assert set(clouds) == {"aws", "azure", "gcp", "lambda", "coreweave", "nebius", "crusoe",
                           "runpod", "vast"}  # fmt: skip
    prices = [r["on_demand_per_gpu_hour"] for r in rows]
    assert prices == sorted(prices)  # ranked by on-demand price, the GPU clouds beside
    assert all(r["on_demand_as_of"] and isinstance(r["on_demand_stale"], bool) for r in rows)
    aws = rows[clouds.index("aws")]
    code, out, _ = run(capsys, "catalog", "--gpu", "H100", "--provider", "aws", "--json")
    offers = json.loads(out)
    assert aws["on_demand_per_gpu_hour"] == min(o["on_demand_per_gpu_hour"] for o in offers)
    spots = [o["spot_hourly"] / o["gpu_count"] for o in offers if o["spot_hourly"]]
    assert aws["spot_per_gpu_hour"] == pytest.approx(min(spots))


def test_cheapest_8x_a100_80gb_in_europe(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["catalog", "--gpu", "A100-80GB", "--gpus", "8", "--region", "europe"]
    code, out, _ = run(capsys, *argv, "--sort", "price", "--top", "1", "--csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 1 and rows[0]["region"] in {"eu-central-1", "eu-west-1", "westeurope"}
    code, out, _ = run(capsys, *argv, "--json")
    prices = sorted(r["on_demand_hourly"] for r in __import__("json").loads(out))
    assert float(rows[0]["on_demand_hourly"]) == pytest.approx(prices[0], abs=1e-4)
    assert "." not in rows[0]["gpu_count"]  # "8", not "8.0"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["catalog", "--region", "eu-wset-1"], "did you mean eu-west-1"),
        (["catalog", "--region", "mars-1"], "unknown region 'mars-1'"),
        (["catalog", "--gpus", "-3"], "positive GPU count"),
        (["catalog", "--gpus", "nan"], "positive GPU count"),
        (["catalog", "--top", "0"], "at least 1"),
        (["catalog", "--sort", "x"], "invalid choice"),
    ],
)
def test_bad_input_exits_2_with_one_prefix(
    capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        code = main([*argv, *BUNDLED])
        raise SystemExit(code)
    _, err = capsys.readouterr()
    assert exit_info.value.code == 2
    assert err.startswith("gpuplan: error: ") and expected in err


def test_csv_has_no_float_noise_and_footer_counts(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "catalog", "--gpu", "T4", "--csv")
    for row in csv.DictReader(io.StringIO(out)):
        for column in ("on_demand_hourly", "spot_hourly", "reserved_3y_hourly"):
            assert len(row[column].partition(".")[2]) <= 4
    _, out, _ = run(capsys, "catalog", "--gpu", "H100", "--top", "2")
    assert "2 offers (top 2 of" in out and "offers sold any way" in out


def test_region_groups_by_naming_scheme() -> None:
    assert region_group(Provider.AWS, "eu-west-1") is RegionGroup.EUROPE
    assert region_group(Provider.AWS, "ap-southeast-2") is RegionGroup.OCEANIA
    assert region_group(Provider.GCP, "europe-west4") is RegionGroup.EUROPE
    assert region_group(Provider.AZURE, "westeurope") is RegionGroup.EUROPE
    assert region_group(Provider.AZURE, "australiaeast") is RegionGroup.OCEANIA
    assert region_group(Provider.AZURE, "southcentralus") is RegionGroup.US
    available = {Provider.AWS: ["us-east-1", "eu-west-1"], Provider.AZURE: ["westeurope"]}
    assert expand_regions(["EU"], available) == {"eu-west-1", "westeurope"}
    assert provider_region_problem(Provider.AWS, "westeurope") == (
        "'westeurope' is a region of azure, not of aws"
    )
    assert provider_region_problem(Provider.AWS, "us-east-1") is None


def test_policy_check_refuses_wrong_regions_and_a_missing_scope(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "version: 1\nname: x\nscope:\n  aws: {regions: [us-east-1, westeurope, us-eest-1]}\n"
        "planning:\n  allowed_regions: [mars-1, eastus]\n",
        encoding="utf-8",
    )
    unscoped = tmp_path / "unscoped.yaml"
    unscoped.write_text("version: 1\nname: y\nbudget: {monthly_usd: 10}\n", encoding="utf-8")
    planning_only = tmp_path / "planning.yaml"
    planning_only.write_text("version: 1\nname: z\nscope: {}\n", encoding="utf-8")
    code = main(["policy", "check", str(bad), str(unscoped), str(planning_only)])
    out, err = capsys.readouterr()
    assert code == 2
    assert "bad.yaml:4:30: scope.aws.regions[1]: 'westeurope' is a region of azure" in err
    assert "unknown aws region 'us-eest-1'; did you mean" in err and "us-east-1" in err
    assert "planning.allowed_regions[0]: unknown region 'mars-1'" in err
    assert "unscoped.yaml: scope: missing" in err
    assert "planning.yaml: ok" in out


def test_job_file_unknown_key_has_line_and_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = tmp_path / "job.yaml"
    job.write_text("params: 7B\ntokns: 1T\n", encoding="utf-8")
    assert main(["estimate", "--job", str(job)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gpuplan: error: {job}:2: tokns: unknown key 'tokns'")
    assert "did you mean 'tokens'?" in err


def test_simulate_says_the_period_and_spend_behind_the_savings(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "simulate", "--instances", "2", "--hours", "12")
    assert code == 0
    assert "2 instances;" in out
    assert "Period: 12 h per instance; spend without stopping: $" in out
    assert "simulating" not in err  # progress only when stderr is a terminal


def test_demo_policy_posts_nowhere_and_a_failed_webhook_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json
    import socket

    docs = Path(__file__).resolve().parents[2] / "docs" / "examples"
    with socket.socket() as probe:  # a loopback port with nothing listening on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(docs / "demo-fleet.json"))
    monkeypatch.setenv("GPUPLAN_DB", str(tmp_path / "demo.db"))
    monkeypatch.setenv("GPUPLAN_WEBHOOK_URL", f"http://127.0.0.1:{port}/")
    policy = str(docs / "demo-policy.yaml")
    assert main(["stop-idle", "--policy", policy]) == 0
    assert main(["stop-idle", "--policy", policy, "--apply"]) == 1
    err = capsys.readouterr().err
    assert "webhook not delivered" in err and "Connection refused" in err
    assert main(["history", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    by_mode = {r["dry_run"]: r for r in runs}
    assert by_mode[True]["status"] == "ok"
    assert by_mode[False]["status"] == "failed"
    assert any("webhook not delivered" in p for p in by_mode[False]["problems"])


def test_price_options_need_prices(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gpus", "--per-cloud"]) == 2
    assert "--per-cloud goes with --prices" in capsys.readouterr().err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("command", ["fleet", "stop-idle"])
def test_surveys_over_many_scopes_show_progress_on_a_terminal_only(
    command: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    docs = Path(__file__).resolve().parents[2] / "docs" / "examples"
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(docs / "demo-fleet.json"))
    monkeypatch.setenv("GPUPLAN_DB", str(tmp_path / "demo.db"))
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "version: 1\nname: two\nscope:\n  aws: {regions: [us-east-1]}\n"
        "  gcp: {projects: [demo-project]}\nidle: {allow_data_loss: false}\n",
        encoding="utf-8",
    )
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main([command, "--policy", str(policy)]) in (0, 1)
    shown = terminal.getvalue()
    assert "surveyed 1/2 scopes" in shown and "surveyed 2/2 scopes" in shown
    monkeypatch.undo()  # stderr back to a pipe (pytest's capture): no progress there
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(docs / "demo-fleet.json"))
    monkeypatch.setenv("GPUPLAN_DB", str(tmp_path / "demo.db"))
    capsys.readouterr()
    assert main([command, "--policy", str(policy)]) in (0, 1)
    assert "surveyed" not in capsys.readouterr().err
