"""A reserved term longer than the job (issue 37: '--gpus 1 lists rows up to a 3-year
reservation'): the row costs the whole term, is ranked by it, and is marked ``^`` with a
line that says what the mark means; ``--reuse-commitment`` charges job hours, unmarked."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.cli.main import main

JOB = ["estimate", "--params", "1B", "--tokens", "20B", "--gpus", "1", "--pricing", "reserved_3y"]


@pytest.fixture(autouse=True)
def bundled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GPUPLAN_CATALOG_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("COLUMNS", "100")


def _json(capsys: pytest.CaptureFixture[str], *extra: str) -> list[dict[str, object]]:
    assert main([*JOB, *extra, "--json"]) == 0
    options: list[dict[str, object]] = json.loads(capsys.readouterr().out)["options"]
    return options


def test_a_term_longer_than_the_job_is_charged_whole_ranked_by_it_and_marked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    options = _json(capsys)
    assert options
    for option in options:
        hours, cost = float(str(option["hours"])), Decimal(str(option["cost_usd"]))
        assert hours < 3 * 365 * 24 and cost == Decimal(str(option["commitment_usd"]))
        assert option["unused_term_hours"] == pytest.approx(3 * 365 * 24 - hours, abs=1)
    # Ranked by what the whole term costs (--include-stale: by cost alone, old prices too).
    costs = [Decimal(str(o["cost_usd"])) for o in _json(capsys, "--include-stale")]
    assert costs == sorted(costs)
    assert main(JOB) == 0
    out = capsys.readouterr().out
    assert out.count("reserved_3y^") >= 5
    legend = r"reserved\^ = the whole term is charged.*\(row 1: [\d.]+ days of 1,095 paid\)"
    assert re.search(legend, out.replace("\n", " ")), out
    assert "--reuse-commitment charges job hours only" in out


def test_reuse_commitment_charges_job_hours_and_drops_the_mark(
    capsys: pytest.CaptureFixture[str],
) -> None:
    options = _json(capsys, "--reuse-commitment")
    assert options and all(o["unused_term_hours"] is None for o in options)
    assert main([*JOB, "--reuse-commitment"]) == 0
    out = capsys.readouterr().out
    assert "reserved_3y" in out and "^" not in out
