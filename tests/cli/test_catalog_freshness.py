"""How fresh each price is: the table's as-of column and marker, the footer's date range,
``catalog --max-age``, and the estimate naming the oldest price it used."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import pytest
from freezegun import freeze_time

from gpuplan.cli.main import main
from gpuplan.core.catalog.kinds import PricingModel
from gpuplan.core.catalog.query import as_of_range, is_old, is_stale, oldest_price_note
from gpuplan.core.errors import InputError
from gpuplan.loaders.catalog import load_catalog
from gpuplan.usecases.catalog.lookup import parse_max_age
from tests.conftest import SMALL_AWS, SMALL_GCP, write_catalog

TODAY = "2026-12-02"
# The westeurope row is as old as the 2023-12 Retail Prices snapshot it comes from; the
# eastus one was read 31 days ago (one day past the 30-day mark), westus 30 days ago.
AZURE = [
    "Standard_ND96isr_H100_v5,westeurope,H100,8,80,96,1900,NVLink,3200,127.816,,,,,"
    "2023-12-18,karpenter snapshot",
    "Standard_ND96isr_H100_v5,eastus,H100,8,80,96,1900,NVLink,3200,98.32,,,,,2026-11-01,api",
    "Standard_ND96isr_H100_v5,westus,H100,8,80,96,1900,NVLink,3200,127.816,,,,,2026-11-02,api",
]


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    return write_catalog(tmp_path / "catalog", aws=SMALL_AWS, gcp=SMALL_GCP, azure=AZURE)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    with freeze_time(TODAY):
        code = main(list(argv))
    return code, capsys.readouterr().out


def test_table_marks_rows_older_than_30_days_and_gives_the_range(
    catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _run(capsys, "catalog", "--provider", "azure", "--catalog-dir", str(catalog_dir))
    assert code == 0
    rows = {line.split()[2]: line for line in out.splitlines() if "Standard_ND96" in line}
    assert rows["westeurope"].rstrip().endswith("2023-12-18 stale")  # over 90 days
    assert rows["eastus"].rstrip().endswith("2026-11-01 *")
    assert rows["westus"].rstrip().endswith("2026-11-02")  # exactly 30 days: not marked
    footer = out.strip().splitlines()[-1]
    assert "as of 2023-12-18 to 2026-11-02" in footer
    assert "* = price older than 30 days (1 row)" in footer
    assert "stale = older than 90 days (1 row), ranked after fresh prices" in footer


def test_max_age_keeps_only_recent_prices(
    catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ("catalog", "--provider", "azure", "--json", "--catalog-dir", str(catalog_dir))
    code, out = _run(capsys, *argv, "--max-age", "30d")
    assert code == 0
    kept = json.loads(out)
    assert [(r["region"], r["as_of"]) for r in kept] == [("westus", "2026-11-02")]
    code, out = _run(capsys, *argv, "--max-age", "5w")
    assert sorted(r["region"] for r in json.loads(out)) == ["eastus", "westus"]
    code, out = _run(capsys, *argv)
    assert len(json.loads(out)) == 3 and all("as_of" in r for r in json.loads(out))


def test_max_age_rejects_garbage_with_one_line(
    catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with freeze_time(TODAY):
        code = main(["catalog", "--max-age", "thirty", "--catalog-dir", str(catalog_dir)])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--max-age" in err[0]


@pytest.mark.parametrize(
    ("text", "days"), [("30d", 30), ("30", 30), ("6w", 42), (" 7D ", 7), ("0d", 0)]
)
def test_parse_max_age(text: str, days: int) -> None:
    assert parse_max_age(text) == timedelta(days=days)


@pytest.mark.parametrize("text", ["", "d", "-3d", "1.5d", "3m", "30 days"])
def test_parse_max_age_rejects(text: str) -> None:
    with pytest.raises(InputError, match="--max-age"):
        parse_max_age(text)


def test_core_freshness_helpers(catalog_dir: Path) -> None:
    offers = [o for o in load_catalog(catalog_dir).offers if o.provider.value == "azure"]
    assert as_of_range(offers) == (date(2023, 12, 18), date(2026, 11, 2))
    assert as_of_range([]) is None
    today = date(2026, 12, 2)
    assert [is_old(o, today) for o in offers] == [True, True, False]
    assert [is_stale(o, today) for o in offers] == [True, False, False]
    note = oldest_price_note([(o, PricingModel.ON_DEMAND) for o in offers], today)
    assert note is not None
    assert (
        "Standard_ND96isr_H100_v5 in westeurope (azure) at on_demand, as_of 2023-12-18, "
        "1080 days old (stale: over 90 days)"
    ) in note


def test_estimate_names_the_oldest_price_it_used(
    catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["estimate", "--params", "7B", "--tokens", "100B", "--gpu", "H100", "--json"]
    code, out = _run(capsys, *argv, "--catalog-dir", str(catalog_dir))
    assert code == 0
    record = json.loads(out)
    lines = [a for a in record["assumptions"] if a.startswith("prices: the oldest used")]
    assert lines == [
        "prices: the oldest used is Standard_ND96isr_H100_v5 in westeurope (azure) at "
        "on_demand, as_of 2023-12-18, 1080 days old (stale: over 90 days)"
    ]
    code, out = _run(capsys, *argv, "--provider", "aws", "--catalog-dir", str(catalog_dir))
    (line,) = [a for a in json.loads(out)["assumptions"] if a.startswith("prices:")]
    assert "p5.48xlarge in us-east-1 (aws) at " in line
    assert "as_of 2026-12-01, 1 days old" in line and "stale" not in line


# A stale price that is the cheapest: westeurope at 90.00, read 2023-12-18 (1,080 days).
CHEAP_STALE = [AZURE[0].replace("127.816", "90.00"), *AZURE[1:]]


@pytest.fixture
def stale_cheapest(tmp_path: Path) -> Path:
    return write_catalog(tmp_path / "stale", aws=SMALL_AWS, gcp=SMALL_GCP, azure=CHEAP_STALE)


def test_stale_prices_are_marked_and_ranked_after_fresh_ones_unless_included(
    stale_cheapest: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["catalog", "--provider", "azure", "--sort", "price-per-gpu", "--json"]
    code, out = _run(capsys, *argv, "--catalog-dir", str(stale_cheapest))
    rows = json.loads(out)
    assert code == 0 and [r["region"] for r in rows] == ["eastus", "westus", "westeurope"]
    assert [r["stale"] for r in rows] == [False, False, True]
    assert rows[2]["age_days"] == 1080
    code, out = _run(capsys, *argv, "--include-stale", "--catalog-dir", str(stale_cheapest))
    assert [r["region"] for r in json.loads(out)] == ["westeurope", "eastus", "westus"]


def test_gpu_prices_take_a_stale_price_only_when_asked(
    stale_cheapest: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["gpus", "--prices", "--gpu", "H100", "--provider", "azure", "--json"]
    code, out = _run(capsys, *argv, "--catalog-dir", str(stale_cheapest))
    (row,) = json.loads(out)
    assert code == 0 and "eastus" in row["on_demand_where"] and row["on_demand_stale"] is False
    code, out = _run(capsys, *argv, "--include-stale", "--catalog-dir", str(stale_cheapest))
    (row,) = json.loads(out)
    assert code == 0
    assert "westeurope" in row["on_demand_where"] and row["on_demand_stale"] is True
    assert row["on_demand_age_days"] == 1080


def test_estimate_ranks_a_stale_price_after_the_fresh_ones(
    stale_cheapest: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["estimate", "--params", "7B", "--tokens", "100B", "--gpu", "H100", "--gpus", "8"]
    argv += ["--provider", "azure", "--pricing", "on_demand", "--json"]
    code, out = _run(capsys, *argv, "--catalog-dir", str(stale_cheapest))
    options = json.loads(out)["options"]
    assert code == 0 and options[0]["region"] == "eastus"
    assert options[-1]["region"] == "westeurope"
    code, out = _run(capsys, *argv, "--include-stale", "--catalog-dir", str(stale_cheapest))
    assert json.loads(out)["options"][0]["region"] == "westeurope"
