"""``estimate --policy`` compares a job's cost per month of its duration with the monthly
budget, and "what would fit" offers only changes that fit within the same limits
(issue 26 items 2b, 4: README's research-spot example; 8-bit Adam that still needs 71.6 GB
on a 24 GB card; "1 GPUs")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuplan.cli.main import main

REPO = Path(__file__).resolve().parents[2]
RESEARCH = str(REPO / "policies" / "research-spot.yaml")


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_readme_policy_example_compares_a_month_of_the_job_with_the_monthly_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["estimate", "--params", "7B", "--tokens", "1T", "--policy", RESEARCH, "--json"]
    code, out, err = _run([*argv, "--db", str(tmp_path / "l.db")], capsys)
    assert code == 0, err
    options = json.loads(out)["options"]
    assert options
    # A job longer than a month may cost more than one month's budget in all ...
    assert any(o["cost_usd"] > 80_000 and o["hours"] > 730 for o in options)
    # ... as long as each month of it stays inside the budget.
    assert all(o["cost_usd"] * 730 / max(o["hours"], 730) <= 80_000 for o in options), [
        (o["gpu"], o["pricing"], o["hours"], o["cost_usd"], o.get("commitment_usd"))
        for o in options
    ]


def test_a_month_of_the_job_over_the_budget_is_named_per_month(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "small.yaml"
    policy.write_text(
        "version: 1\nname: small\nscope: {}\nbudget: {monthly_usd: 1000}\n"
        "planning: {allowed_gpus: [H100], allowed_pricing: [on_demand]}\n",
        encoding="utf-8",
    )
    argv = ["estimate", "--params", "7B", "--tokens", "1T", "--policy", str(policy)]
    code, _, err = _run([*argv, "--db", str(tmp_path / "l.db"), "--gpus", "8"], capsys)
    assert code == 1
    assert "a month ($" in err and "months) is over the policy's remaining budget" in err


def test_what_would_fit_offers_only_changes_that_fit(capsys: pytest.CaptureFixture[str]) -> None:
    # 20B tokens: more L4s finish inside the 90-day cap (2T would not, whatever the count).
    argv = ["estimate", "--params", "70B", "--tokens", "20B", "--gpu", "L4", "--gpus", "8"]
    code, _, err = _run(argv, capsys)
    assert code == 1
    assert "8-bit Adam" not in err  # 70B at 10 B/param over 8 x 24 GB: still does not fit
    assert "what would fit:\n  more GPUs: at least" in err
    assert "checked would still not fit" in err


def test_what_would_fit_stays_inside_the_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "h100.yaml"
    policy.write_text(
        "version: 1\nname: h100\nscope: {}\nplanning: {allowed_gpus: [H100]}\n", encoding="utf-8"
    )
    argv = ["estimate", "--params", "70B", "--tokens", "2T", "--gpu", "L4", "--gpus", "8"]
    code, _, err = _run([*argv, "--policy", str(policy), "--db", str(tmp_path / "l.db")], capsys)
    assert code == 1
    assert "what would fit" not in err  # every L4 option is outside the policy


def test_one_gpu_is_singular(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["estimate", "--params", "7B", "--tokens", "20B", "--gpu", "L4", "--gpus", "1"]
    _, _, err = _run(argv, capsys)
    assert "1 GPU is not a whole number" in err and "1 GPUs" not in err


def test_a_single_zone_spot_dip_is_flagged_and_ranked_at_the_median(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["estimate", "--params", "7B", "--tokens", "1T", "--json", "--all", "--top", "5000"]
    code, out, _ = _run(argv, capsys)
    assert code == 0
    options = json.loads(out)["options"]
    first = options[0]
    assert not first["spot_outlier"], first  # p4d spot at $2.47/h in one zone is not first
    flagged = [o for o in options if o["spot_outlier"]]
    assert any(o["cost_usd"] < first["cost_usd"] for o in flagged)  # listed price kept


def test_catalog_and_gpu_prices_flag_the_spot_dip(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(["catalog", "--gpu", "A100-40GB", "--provider", "aws", "--wide"], capsys)
    row = next(line for line in out.splitlines() if "us-east-1" in line)
    assert "!" in row and "! = one zone's spot price" in out
    _, out, _ = _run(["gpus", "--prices", "--gpu", "A100-40GB", "--wide"], capsys)
    assert "(spot!)" in out
    _, out, _ = _run(["gpus", "--prices", "--gpu", "A100-40GB", "--json"], capsys)
    assert json.loads(out)[0]["spot_outlier"]
