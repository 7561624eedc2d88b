"""A ledger location is a path in an existing folder or a URL; anything else is exit 2
with one line that never repeats a password, and nothing is created (issue 28, item 4)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.errors import InputError
from gpuplan.ledger.location import ledger_location

SECRET = "S3cr3t-never-shown"

BAD = {
    "libpq keywords": (f"host=db.example port=5432 dbname=l user=u password={SECRET}", "libpq"),
    "libpq, spaced": (f" password = {SECRET} host=db", "libpq"),
    "dash": ("-", "'-'"),
    "empty": ("", "empty"),
    "blank": ("   ", "empty"),
    "missing folder": ("/no/such/dir/x.db", "folder does not exist"),
    "URL without a scheme": (f"gpuplan:{SECRET}@db.example/ledger", "folder does not exist"),
    "other scheme": (f"mysql://u:{SECRET}@h/d", "mysql:// URL is not a ledger location"),
    "sqlite without a path": ("sqlite:///", "sqlite:///PATH"),
    "sqlite in a missing folder": ("sqlite:///no/such/dir/x.db", "folder does not exist"),
    "control characters": ("\x1b[2Jx.db", "control characters"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_location_is_bad_input_without_the_password(case: str) -> None:
    value, says = BAD[case]
    with pytest.raises(InputError) as caught:
        ledger_location(value)
    message = caught.value.message
    assert says in message and message.startswith("--db: ")
    assert SECRET not in message and "\n" not in message and "\x1b" not in message


def test_the_variable_is_named_when_it_is_the_bad_one() -> None:
    with pytest.raises(InputError, match=r"^GPUPLAN_DB: a libpq keyword"):
        ledger_location(None, {"GPUPLAN_DB": f"host=x password={SECRET}"})
    default = ledger_location(None, {"GPUPLAN_DB": ""})  # empty variable: unset
    assert isinstance(default, Path) and default.name == "ledger.sqlite3"


def test_good_locations(tmp_path: Path) -> None:
    assert ledger_location(str(tmp_path / "l.db")) == tmp_path / "l.db"
    assert ledger_location(f"sqlite:///{tmp_path}/l.db") == tmp_path / "l.db"
    url = "postgresql://gpuplan@127.0.0.1:5432/ledger"
    assert ledger_location(url) == url


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("command", ["history", "savings", "stop-idle"])
def test_every_ledger_command_refuses_it_and_creates_nothing(
    case: str, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    value, _ = BAD[case]
    monkeypatch.chdir(tmp_path)
    policy = Path(__file__).parents[2] / "policies" / "notify-only.yaml"
    argv = {"history": ["history"], "savings": ["savings"],
            "stop-idle": ["stop-idle", "--policy", str(policy)]}[command]  # fmt: skip
    try:
        code = main([*argv, "--db", value])
    except SystemExit as refused:  # a blank value is refused by the argument parser
        code = refused.code
    out, err = capsys.readouterr()
    assert code == 2, err
    line = err.strip().splitlines()[0]
    assert line.startswith(("gpuplan: error: --db: ", "gpuplan: error: argument --db: "))
    assert SECRET not in out + err and out == ""
    assert os.listdir(tmp_path) == []  # no ledger named after the value, no folders
    assert not Path("/no").exists()
