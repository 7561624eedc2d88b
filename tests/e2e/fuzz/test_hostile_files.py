"""Every file-taking option of every command, handed every kind of hostile file.

A fixed corpus (deterministic): each case must end with exit 2 and one readable line,
never a traceback, never a hang (each case has a 10 s alarm; most take milliseconds).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.fuzz.conftest import Hostile
from tests.e2e.fuzz.runner import describe, problems_with, run_cli

Argv = Callable[[str], list[str]]
FILE_OPTIONS: dict[str, Argv] = {
    "policy-check": lambda f: ["policy", "check", f],
    "policy-check-json": lambda f: ["policy", "check", "--json", f],
    "policy-show": lambda f: ["policy", "show", f],
    "budget": lambda f: ["budget", "--policy", f],
    "fleet": lambda f: ["fleet", "--policy", f],
    "stop-idle": lambda f: ["stop-idle", "--policy", f, "--apply"],
    "snooze": lambda f: ["snooze", "i-0fuzz", "--policy", f, "--for", "2h"],
    "savings": lambda f: ["savings", "--policy", f],
    "estimate-job": lambda f: ["estimate", "--job", f],
    "estimate-policy": lambda f: ["estimate", "--params", "7e9", "--tokens", "1e9", "--policy", f],
    "simulate-policy": lambda f: ["simulate", "--policy", f, "--instances", "2", "--hours", "2"],
}
DB_COMMANDS: dict[str, Argv] = {
    "stop-idle": lambda f: ["stop-idle", "--policy", "policies/notify-only.yaml", "--db", f],
    "history": lambda f: ["history", "--db", f],
    "savings": lambda f: ["savings", "--db", f],
    "fleet-report": lambda f: ["fleet", "--report", "--db", f],
}
FILE_KINDS = ["missing", "folder", "dev-zero", "dev-null", "fifo", "huge-sparse", "empty",
              "nul-bytes", "bad-utf8"]  # fmt: skip


def _check(argv: list[str], allowed: tuple[int, ...] = (2,)) -> None:
    result = run_cli(argv)
    found = problems_with(result, allowed)
    assert not found, f"{describe(result)}: " + "; ".join(found)
    assert "fuzz-secret-never-printed" not in result.out + result.err
    if result.code == 2:
        lines = [line for line in (result.err + result.out).splitlines() if "error" in line]
        assert lines, f"{describe(result)}: exit 2 without an error line"


@pytest.mark.parametrize("kind", FILE_KINDS)
@pytest.mark.parametrize("command", sorted(FILE_OPTIONS))
def test_hostile_files_everywhere_a_file_is_read(hostile: Hostile, command: str, kind: str) -> None:
    _check(FILE_OPTIONS[command](str(hostile.files[kind])))


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "huge-sparse", "nul-bytes", "folder"])
@pytest.mark.parametrize("command", sorted(DB_COMMANDS))
def test_hostile_ledger_files(hostile: Hostile, command: str, kind: str) -> None:
    _check(
        DB_COMMANDS[command](str(hostile.files[kind])),
        allowed=(1, 2) if kind in ("huge-sparse", "nul-bytes") else (2,),
    )


def test_every_bad_policy_is_refused_by_every_policy_command(hostile: Hostile) -> None:
    for name, path in sorted(hostile.policies.items()):
        for command in ("policy-check", "policy-show", "budget", "stop-idle", "fleet"):
            _check(FILE_OPTIONS[command](str(path)))
        del name


@pytest.mark.parametrize("name", ["job-big-int.json", "job-deep.json", "job-list.yaml",
                                  "job-unknown.yaml", "job-date.yaml", "job-deep.yaml",
                                  "job-bad.json", "job-nan.yaml", "job-inf.json"])  # fmt: skip
def test_bad_job_files(hostile: Hostile, name: str) -> None:
    _check(["estimate", "--job", str(hostile.jobs[name])])


@pytest.mark.parametrize("name", ["no-fleet", "bad-header", "nan-price", "huge-price",
                                  "bad-minute", "inf-util", "missing-series", "traversal",
                                  "fifo"])  # fmt: skip
def test_bad_trace_folders(hostile: Hostile, name: str) -> None:
    _check(
        ["simulate", "--policy", str(hostile.good_policy), "--traces", str(hostile.traces[name])]
    )


@pytest.mark.parametrize(
    "kind", ["dev-zero", "fifo", "huge-sparse", "nul-bytes", "bad-utf8", "empty"]
)
@pytest.mark.parametrize("file", ["aws.csv", "gcp.csv", "azure.csv", "gpus.toml"])
def test_hostile_catalog_files(hostile: Hostile, tmp_path: Path, file: str, kind: str) -> None:
    folder = tmp_path / "catalog"
    folder.mkdir()
    source = hostile.files[kind]
    if kind == "fifo":
        import os

        os.mkfifo(folder / file)
    elif source.is_file() and source.stat().st_size < 1024:
        (folder / file).write_bytes(source.read_bytes())
    else:
        (folder / file).symlink_to(source)
    readers = [["catalog"], ["estimate", "--params", "7e9", "--tokens", "1e9"]]
    if file == "gpus.toml":
        readers.append(["gpus"])
    for argv in readers:
        _check([*argv, "--catalog-dir", str(folder)])
