"""Tables fit the terminal (issue 26 item 5, issue 37): with ``COLUMNS`` at 80, 100 and
120 every line of estimate (its table, --compare-gpus, --explain), catalog (--source,
--sort), gpus, gpus --prices, fleet, stop-idle, budget, audit, savings, waste, history
and simulate fits, the least important columns go first (named in a closing line), no
number or name is cut, and ``--wide`` shows every column. A pipe without ``COLUMNS``
gets every column."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from tests.e2e.fuzz.corpus import VALID_POLICY, fake_fleet

WORK = ["--params", "7B", "--tokens", "1T"]


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(fake_fleet(tmp_path)))
    monkeypatch.setenv("GPUPLAN_DB", str(tmp_path / "ledger.sqlite3"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("GPUPLAN_CATALOG_DIR", raising=False)
    policy = tmp_path / "p.yaml"
    policy.write_text(VALID_POLICY, encoding="utf-8")
    return policy


def _out(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    return out


COMMANDS = [
    ["estimate", *WORK],
    ["estimate", "--params", "70B", "--tokens", "2T", "--gpu", "H100", "--show-infeasible"],
    ["catalog"],
    ["gpus"],
    ["gpus", "--prices"],
    ["gpus", "--prices", "--per-cloud"],
    ["fleet", "--policy", "POLICY"],
    ["stop-idle", "--policy", "POLICY"],
    ["budget", "--policy", "POLICY"],
    ["audit", "--policy", "POLICY"],
    ["savings"],
    ["waste"],
    ["fleet", "--report"],  # --policy does nothing with --report (exit 2)
    ["estimate", *WORK, "--compare-gpus"],
    ["estimate", *WORK, "--explain", "1"],
    ["catalog", "--source"],
    ["catalog", "--sort", "tflops-per-dollar"],
    ["history"],
    ["simulate", "--instances", "8", "--hours", "24"],
]


LEDGER_READERS = ("fleet", "stop-idle", "budget", "audit", "savings", "waste", "history")
"""Commands whose tables show ledger rows: a recorded run comes first (the rest need none)."""


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:3] + a[4:6]))
def test_every_line_fits_columns(
    argv: list[str],
    offline: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [str(offline) if a == "POLICY" else a for a in argv]
    if argv[0] in LEDGER_READERS:
        assert main(["stop-idle", "--policy", str(offline), "--apply"]) in (0, 1)  # ledger rows
    capsys.readouterr()
    for width in (80, 100, 120):
        monkeypatch.setenv("COLUMNS", str(width))
        narrow = _out(argv, capsys)
        longest = max(narrow.splitlines(), key=len)
        assert len(longest) <= width, f"{len(longest)} > {width}: {longest}"
    monkeypatch.delenv("COLUMNS")
    wide = _out([*argv, "--wide"], capsys)
    if argv[0] in ("estimate", "catalog", "gpus"):
        assert max(len(line) for line in wide.splitlines()) > 80


def test_narrow_estimate_keeps_whole_names_and_numbers(
    offline: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    wide = _out(["estimate", *WORK, "--top", "5", "--wide"], capsys)
    monkeypatch.setenv("COLUMNS", "80")
    narrow = _out(["estimate", *WORK, "--top", "5"], capsys)
    header, rule, *rows = wide.splitlines()[:7]
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]
    names = [header[a:b].strip() for a, b in spans]
    for w, n in zip(rows, narrow.splitlines()[2:7], strict=True):
        cell = {name: w[a:b].strip() for name, (a, b) in zip(names, spans, strict=True)}
        assert cell["GPU x count"] in n  # "A100-40GB x 64": never cut
        assert cell["cost USD"] in n.split()  # every digit
    assert "columns left out to fit 80" in narrow and "--wide shows them" in narrow
    assert "MFU" in narrow.split("columns left out")[1]


def test_a_pipe_without_columns_gets_every_column(
    offline: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    out = _out(["estimate", *WORK, "--top", "3"], capsys)
    assert "MFU" in out.splitlines()[0] and "columns left out" not in out
