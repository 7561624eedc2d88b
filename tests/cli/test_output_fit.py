"""What a narrow table and a failed estimate say (issue 37, wrong or misleading output):
rows never read the same when columns are left out, the sort column stays, a footer
explains only what is shown, an over-budget estimate names its cheapest option, no GPU
count lists a run past the longest term sold, amounts take suffixes, and an unknown flag
is one line naming the command's help."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.cli.render import render_table
from gpuplan.core.planner.feasibility import DEFAULT_MAX_HOURS

TABLE_END = re.compile(r"^\s*$|^\(")


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _rows(out: str) -> list[str]:
    """The table's body: after the header rule, up to the first blank or note line."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("--"))
    body = []
    for line in lines[start + 1 :]:
        if TABLE_END.match(line):
            break
        body.append(line)
    return body


@pytest.fixture
def bundled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GPUPLAN_CATALOG_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("COLUMNS", "80")


def test_dropping_a_column_never_makes_two_rows_read_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    headers = ["#", "GPU", "instance", "provider", "cost"]
    rows = [
        ["1", "H100 x 8", "a3-highgpu-8g", "gcp", "10"],
        ["2", "H100 x 8", "a3-megagpu-8g", "gcp", "10"],
    ]
    text = render_table(headers, rows, drop=(3, 2), numbering=0)
    body = [line.split(maxsplit=1)[1] for line in text.splitlines()[2:4]]
    assert body[0] != body[1]
    assert "a3-highgpu-8g" in text and "provider" in text.split("left out")[1]


def test_narrow_estimate_rows_are_told_apart(
    bundled: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # Four GCP H100 x 8 instance types price the same run in the same regions.
    argv = ["estimate", "--params", "1B", "--tokens", "20B", "--gpu", "H100", "--gpus", "8"]
    code, out, _ = _run(argv, capsys)
    assert code == 0
    rows = [line.split(maxsplit=1)[1] for line in _rows(out)]  # the rank aside
    assert len(rows) > 4
    assert len(set(rows)) == len(rows), "\n".join(rows)


@pytest.mark.parametrize("columns", ["80", "100"])
def test_a_narrow_estimate_keeps_the_cloud_of_each_row(
    columns: str,
    bundled: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """GPU clouds' regions (``global``, ``us``) do not name the cloud, so the provider is
    the last column a narrow estimate gives up: each row still says whose offer it is."""
    monkeypatch.setenv("COLUMNS", columns)
    argv = ["estimate", "--params", "8B", "--tokens", "15T", "--gpu", "H100", "--gpus", "1024"]
    code, out, _ = _run(argv, capsys)
    assert code == 0
    header = out.splitlines()[0].split()
    assert "provider" in header
    clouds = {line.split()[4] for line in _rows(out)}  # #, GPU, x, count, provider
    assert {"aws", "gcp"} <= clouds and clouds & {"vast", "runpod", "lambda", "nebius"}


def test_catalog_sort_column_is_never_dropped(
    bundled: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(["catalog", "--sort", "tflops-per-dollar"], capsys)
    assert code == 0
    assert "TF/s/$" in out.splitlines()[0]
    assert max(len(line) for line in out.splitlines()) <= 80


def test_catalog_footer_explains_only_what_is_shown(
    bundled: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, narrow, _ = _run(["catalog"], capsys)
    assert code == 0
    header = narrow.splitlines()[0]
    assert "as of" not in header  # left out at 80 columns
    assert "* = price older" not in narrow
    assert re.search(r"\d+ rows\s+priced over 30 days ago", narrow)
    code, wide, _ = _run(["catalog", "--wide"], capsys)
    assert "as of" in wide.splitlines()[0] and "* = price older than 30 days" in wide


def test_a_stale_row_stays_marked_when_the_as_of_column_is_left_out(
    bundled: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 34: rows over 90 days old are marked in every table, whatever its width."""
    code, wide, _ = _run(["catalog", "--provider", "azure", "--wide"], capsys)
    stale_rows = [line for line in wide.splitlines() if line.rstrip().endswith(" stale")]
    assert code == 0 and stale_rows
    code, narrow, _ = _run(["catalog", "--provider", "azure"], capsys)
    assert "as of" not in narrow.splitlines()[0]
    assert max(len(line) for line in narrow.splitlines()) <= 80
    marked = [line for line in narrow.splitlines() if line.rstrip().endswith(" ~")]
    assert len(marked) == len(stale_rows)
    assert "~ = older than 90 days" in " ".join(narrow.split())


def test_budget_summary_names_the_cheapest_option_once(
    bundled: None, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["estimate", "--params", "7B", "--tokens", "1T"]
    code, out, _ = _run([*argv, "--json"], capsys)
    cheapest = min(o["cost_usd"] for o in json.loads(out)["options"])
    code, _, err = _run([*argv, "--budget", "5000"], capsys)
    assert code == 1
    budget_lines = [line for line in err.splitlines() if "over the budget" in line]
    assert len(budget_lines) == 2, err  # the grouped reason and the cheapest option
    assert re.search(r"cost over the budget of \$5,000.00 \([\d,]{5} options\)", err)
    line = next(line for line in err.splitlines() if line.startswith("cheapest:"))
    assert f"${cheapest:,.0f}," in line
    assert f"${cheapest - 5000:,.0f} over the budget of $5,000" in line


@pytest.mark.parametrize("gpus", ["1", "3"])
def test_the_90_day_cap_holds_whatever_the_gpu_count(
    gpus: str, bundled: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # On main --gpus lifted every cap: 3 x A100-80GB for 1,400 days was option 1; then a
    # three-year cap with --gpus only (519 days ranked first). One rule now: 90 days.
    argv = ["estimate", "--params", "7B", "--tokens", "1T", "--method", "lora", "--json"]
    code, out, _ = _run([*argv, "--gpus", gpus], capsys)
    record = json.loads(out)
    assert code == 1 and record["options"] == []
    assert "options over 90 days left out (--deadline changes this)" in record["assumptions"]
    assert any("over 90.0 days" in r for r in record["infeasible_reasons"])
    code, out, _ = _run([*argv, "--gpus", gpus, "--deadline", "20000d"], capsys)
    assert code == 0
    assert any(o["hours"] > DEFAULT_MAX_HOURS for o in json.loads(out)["options"])


def test_the_cap_is_stated_with_gpus_and_without(
    bundled: None, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["estimate", "--params", "1B", "--tokens", "20B", "--json"]
    for extra in ([], ["--gpus", "8"]):
        code, out, _ = _run([*base, *extra], capsys)
        assumptions = json.loads(out)["assumptions"]
        assert code == 0
        assert "options over 90 days left out (--deadline changes this)" in assumptions
    code, out, _ = _run([*base, "--deadline", "30d"], capsys)
    assert not any("left out (--deadline" in a for a in json.loads(out)["assumptions"])


def test_nothing_under_the_cap_exits_1_naming_the_fastest_and_the_way_under(
    bundled: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(["estimate", "--params", "7B", "--tokens", "1T", "--gpus", "1"], capsys)
    assert code == 1
    assert "No feasible option." in out
    first = err.splitlines()[1]
    over = r"1 x B200 take [\d,.]+ days: over 90.0 days .*; \d+ x B200 meet 90.0 days"
    assert re.search(over, first)
    assert re.search(r"fastest: B200 x 1 .* takes [\d,.]+ days, over 90 days", err), err
    assert re.search(r"--gpu B200 --gpus \d+ finishes inside or --deadline \d+d lists it", err)


@pytest.mark.parametrize(("text", "budget"), [("5M", 5_000_000), ("50K", 50_000), ("$1.5B", 1.5e9)])
def test_budget_takes_suffixes(
    text: str, budget: float, bundled: None, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["estimate", "--params", "7B", "--tokens", "1T", "--budget", text, "--json"]
    code, out, err = _run(argv, capsys)
    assert code in (0, 1), err
    options = json.loads(out)["options"]
    assert all(o["cost_usd"] <= budget for o in options)
    assert (text == "50K") or options


def test_max_hourly_takes_suffixes_and_refuses_words(
    bundled: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run(["catalog", "--max-hourly", "0.1K", "--json"], capsys)
    assert code == 0
    assert all(o["on_demand_hourly"] <= 100 for o in json.loads(out) if o["on_demand_hourly"])
    code, _, err = _run(["catalog", "--max-hourly", "5 dollars"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "50K or 5M" in err


@pytest.mark.parametrize(
    ("argv", "helped"),
    [
        (["estimate", "--params", "7B", "--tokens", "1T", "--colour", "blue"], "gpuplan estimate"),
        (["catalog", "refresh", "--colour", "blue"], "gpuplan catalog refresh"),
        (["gpus", "--colour"], "gpuplan gpus"),
    ],
)
def test_an_unknown_flag_is_one_line_naming_the_commands_help(
    argv: list[str], helped: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("gpuplan: error: unrecognized arguments: --colour")
    assert err.rstrip().endswith(f"(see '{helped} --help')")


def test_an_empty_listing_says_why(bundled: None, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["catalog", "--gpu", "MI355X", "--provider", "aws,azure,gcp"], capsys)
    assert code == 0
    assert "no offer for MI355X (providers searched: aws, azure, gcp)" in out.replace("\n", " ")
    assert "---" not in out  # no empty table
    code, out, _ = _run(
        ["catalog", "--gpu", "H100", "--provider", "aws", "--max-hourly", "0.01"], capsys
    )
    assert "No offers match these filters" in out and "searched: aws." in out


def test_gpu_counts_are_whole_numbers_in_json_and_the_api(
    bundled: None, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpuplan.api import find_offers, load_catalog

    _, out, _ = _run(["catalog", "--gpu", "H100,A10", "--json"], capsys)
    counts = {o["instance_type"]: o["gpu_count"] for o in json.loads(out)}
    assert counts["p5.48xlarge"] == 8 and isinstance(counts["p5.48xlarge"], int)
    assert isinstance(counts["Standard_NV6ads_A10_v5"], float)  # a sixth of a GPU stays one
    offer = find_offers(load_catalog(), gpus=["H100"], providers=["aws"])[0]
    assert isinstance(offer.gpu_count, int)


def test_memory_is_gib_in_the_table_the_explanation_and_json(
    bundled: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("COLUMNS")
    argv = ["estimate", "--params", "7B", "--tokens", "1T", "--top", "1"]
    _, out, _ = _run([*argv, "--explain", "1"], capsys)
    assert "mem GiB/GPU" in out.splitlines()[0]
    total = re.search(r"memory per GPU \(GiB\).*?= ([\d.]+) of", out, re.S)
    assert total is not None, out
    _, out, _ = _run([*argv, "--json"], capsys)
    option = json.loads(out)["options"][0]
    assert option["memory_per_gpu_gib"] == pytest.approx(float(total.group(1)), abs=0.01)
    assert "capacity_gib" in option["memory"] and "capacity_gb" not in option["memory"]
    _, _, err = _run(
        ["estimate", "--params", "70B", "--tokens", "20B", "--gpu", "L4", "--gpus", "1"], capsys
    )
    assert re.search(r"needs [\d.]+ GiB per GPU, has 24 GiB", err), err


def test_explain_cites_no_file_of_the_test_suite(
    bundled: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("COLUMNS")
    _, out, _ = _run(["estimate", "--params", "7B", "--tokens", "1T", "--explain", "1"], capsys)
    assert "MFU" in out and "docs/estimating.md" in out
    assert ".csv" not in out and "tests/" not in out
