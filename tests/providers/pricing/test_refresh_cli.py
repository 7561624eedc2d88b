"""The refresh plumbing: core gates and diff, the writer's round trip, the overlay rule,
and start-up staying free of cloud SDKs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.catalog.offers import Offer, PricingModel, Provider
from gpuplan.core.catalog.refresh import (
    Quote,
    Severity,
    build_offers,
    diff_offers,
    shapes_by_type,
    summarise_spot,
    vanish_problem,
)
from gpuplan.core.clouds import facts_of
from gpuplan.loaders.catalog import load_catalog, user_catalog_dir
from gpuplan.loaders.catalog_files import load_provider_file
from gpuplan.loaders.catalog_writer import provider_csv, write_provider_file

DAY = date(2026, 12, 2)


def _offers(directory: Path, provider: Provider) -> list[Offer]:
    return [o for o in load_catalog(directory).offers if o.provider is provider]


@pytest.mark.parametrize("provider", [p for p in Provider if facts_of(p).catalog_file])
def test_writer_round_trips_through_the_loader(
    catalog_dir: Path, tmp_path: Path, provider: Provider
) -> None:
    offers = _offers(catalog_dir, provider)
    path = write_provider_file(tmp_path / "out", provider, offers)
    table = load_catalog(catalog_dir).gpus
    again = load_provider_file(path, provider, table).offers
    assert [replace(o, origin="") for o in again] == [
        replace(o, origin="") for o in sorted(offers, key=lambda o: (o.instance_type, o.region))
    ]
    assert not list((tmp_path / "out").glob(".*.tmp"))  # no temporary file left behind


def test_gcp_file_keeps_host_and_gpu_parts(catalog_dir: Path) -> None:
    text = provider_csv(_offers(catalog_dir, Provider.GCP))
    assert text.splitlines()[0].count("host_") == 4
    assert "0.739,2.934" in text


def test_build_rejects_the_region_and_flags_spot(catalog_dir: Path) -> None:
    shapes = shapes_by_type(_offers(catalog_dir, Provider.AWS))
    quotes = [
        Quote("p5.48xlarge", "us-east-1", PricingModel.ON_DEMAND, Decimal("55.04")),
        Quote("p5.48xlarge", "us-east-1", PricingModel.SPOT, Decimal("55.04"), zone="use1-az1"),
        Quote("g5.xlarge", "us-west-2", PricingModel.ON_DEMAND, Decimal("700")),
        Quote("g9.huge", "us-west-2", PricingModel.ON_DEMAND, Decimal("3")),
    ]
    built, problems = build_offers(Provider.AWS, shapes, quotes, as_of=DAY, source="t")
    assert list(built) == ["us-east-1"]
    messages = {(p.severity, p.region): p.message for p in problems}
    assert "spot 55.04 >= on-demand 55.04" in messages[(Severity.WARNING, "us-east-1")]
    assert "placeholder" in messages[(Severity.ERROR, "us-west-2")]
    assert "g9.huge" in messages[(Severity.WARNING, None)]
    p5 = built["us-east-1"][0]
    assert (p5.as_of, p5.reserved_1y_hourly, p5.spot_zone) == (DAY, None, "use1-az1")


def test_diff_and_vanish_gate(catalog_dir: Path) -> None:
    old = _offers(catalog_dir, Provider.AWS)
    new = [replace(o, **{"spot_hourly": Decimal(1)}) for o in old[1:]]
    diff = diff_offers(old, new)
    assert [o.instance_type for o in diff.removed] == [old[0].instance_type]
    assert len(diff.changed) == 2 and diff.largest_moves(1)[0].change is not None
    refused = vanish_problem(Provider.AWS, old, new, force=False)
    assert refused is not None and refused.severity is Severity.ERROR
    assert "1 of 3 offers (33%) would vanish" in refused.message
    forced = vanish_problem(Provider.AWS, old, new, force=True)
    assert forced is not None and forced.severity is Severity.WARNING
    assert vanish_problem(Provider.AWS, old, old, force=False) is None


def test_spot_summary_takes_lowest_zone_and_median() -> None:
    summary = summarise_spot(
        {"use1-az1": Decimal("3"), "use1-az2": Decimal("1"), "use1-az4": Decimal("2")}
    )
    assert summary is not None
    assert (summary.minimum, summary.zone, summary.median) == (1, "use1-az2", 2)
    assert summarise_spot({}) is None


def test_user_catalog_dir_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert user_catalog_dir() == tmp_path / "xdg" / "gpuplan" / "catalog"
    monkeypatch.setenv("GPUPLAN_CATALOG_DIR", str(tmp_path / "env"))
    assert user_catalog_dir() == tmp_path / "env"
    assert user_catalog_dir(tmp_path / "flag") == tmp_path / "flag"


def test_source_table_names_file_and_date(
    catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["catalog", "--source", "--provider", "aws", "--catalog-dir", str(catalog_dir)]) == 0
    )
    out = capsys.readouterr().out
    assert "as_of" in out and "from" in out
    assert str(catalog_dir / "aws.csv") in out and "2026-12-01" in out


def test_catalog_listing_still_works_without_sub_action(
    catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["catalog", "--gpu", "H100", "--json", "--catalog-dir", str(catalog_dir)]) == 0
    assert {r["gpu"] for r in json.loads(capsys.readouterr().out)} == {"H100"}


def test_unknown_provider_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "refresh", "--provider", "oracle"]) == 2
    assert "unknown provider 'oracle'" in capsys.readouterr().err


def test_catalog_commands_load_no_cloud_sdk(catalog_dir: Path) -> None:
    probe = (
        "import sys\n"
        "from gpuplan.cli.main import main\n"
        f"main(['catalog', '--source', '--catalog-dir', {str(catalog_dir)!r}])\n"
        "import gpuplan.usecases.catalog.refresh, gpuplan.cli.catalog_refresh_cmd\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('boto3', 'botocore', 'google', 'azure', 'textual'))\n"
        "assert not bad, bad\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


def test_partial_catalog_dir_takes_the_rest_from_the_bundle(tmp_path: Path) -> None:
    from gpuplan.loaders.catalog import load_gpus

    user = tmp_path / "partial"
    user.mkdir()
    assert "H100" in load_gpus(user)  # no gpus.toml there: the bundled table
    assert load_catalog(user).offers  # no provider files there: the bundled offers


def test_user_file_older_than_the_bundle_gets_a_notice(tmp_path: Path) -> None:
    from gpuplan.loaders.paths import bundled_pricing_dir

    bundled = bundled_pricing_dir() / "azure.csv"
    user = user_catalog_dir()  # the default folder (XDG_DATA_HOME points into tmp_path)
    user.mkdir(parents=True)
    text = bundled.read_text(encoding="utf-8")
    # Every row's as_of cell (rows carry their own dates) set to one older day.
    older = re.sub(r",\d{4}-\d{2}-\d{2},", ",2025-01-15,", text)
    (user / "azure.csv").write_text(older, "utf-8")
    notices = load_catalog().notices
    assert any("as_of 2025-01-15 hide newer bundled ones" in n for n in notices), notices
    # Named on purpose, the same folder is what the user wants: no notice.
    assert not any("hide newer" in n for n in load_catalog(user).notices)
    (user / "azure.csv").write_text(text, "utf-8")
    assert not any("hide newer" in n for n in load_catalog().notices)
