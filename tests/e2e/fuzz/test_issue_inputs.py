"""Issue 28 items 5, 8, 9 and issue 26 item 4, from the shared case table: each hostile
input ends with its exit code, one line on stderr when refused, no traceback, no hang,
no secret and no raw control character in any output."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.e2e.fuzz.issue_cases import ESC, SECRET, Case, cases, write_inputs
from tests.e2e.fuzz.runner import run_cli


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    root = tmp_path_factory.mktemp("issue-inputs")
    write_inputs(root)
    return {c.name: c for c in cases(root) if c.owner == "cli"}


NAMES = [c.name for c in cases(Path("/nonexistent")) if c.owner == "cli"]


@pytest.mark.parametrize("name", NAMES)
def test_hostile_input_ends_cleanly(
    name: str,
    table: dict[str, Case],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)  # a ledger or file written by mistake would land here
    case = table[name]
    started = time.monotonic()
    result = run_cli(list(case.argv), limit_s=20)
    seconds = time.monotonic() - started
    text = result.out + result.err
    assert result.escaped is None, result.escaped
    assert not result.hung
    assert result.code in case.allowed, result.err
    assert SECRET not in text
    assert ESC not in text and "\x07" not in text
    if case.allowed == (2,) and case.argv[:2] != ("policy", "check"):  # that one lists all
        lines = [line for line in result.err.splitlines() if not line.startswith("(see")]
        assert len(lines) == 1, result.err
        assert seconds < 5, f"refused after {seconds:.1f} s"
    assert list(cwd.iterdir()) == []


def test_every_string_option_of_every_command_refuses_a_blank_value() -> None:
    blank = [c for c in cases(Path("/nonexistent")) if c.name.startswith("blank ")]
    assert len(blank) > 100  # every option that takes a value, of every command and action
    assert any(c.argv[:3] == ("catalog", "refresh", "--provider") for c in blank)
