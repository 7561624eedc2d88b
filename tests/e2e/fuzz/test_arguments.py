"""Hypothesis over every command's arguments: no traceback, no hang, exit 0, 1 or 2.

The commands and their options are read from the real parser (``build_parser``), so a
new flag is fuzzed without touching this file. Values come from a hostile pool (NaN,
infinities, 5,000-digit numbers, NUL bytes, huge repeats, dates that do not exist,
paths to FIFOs and /dev/zero) mixed with plausible ones, so that some cases get past
argument parsing into the loaders and the core. Deterministic (``derandomize``).
``tui`` is left to the fixed cases below: a valid ``tui`` call starts the app.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuplan.cli.main import build_parser
from tests.e2e.fuzz.conftest import Hostile
from tests.e2e.fuzz.corpus import BIG_INT
from tests.e2e.fuzz.runner import describe, problems_with, run_cli

Option = tuple[str, argparse.Action]
SKIPPED = {("tui",)}
PATH_OPTIONS = {"--policy", "--job", "--traces", "--db", "--catalog-dir", "--write-traces",
                "--policies", "files", "file", "directory"}  # fmt: skip
HOSTILE_VALUES = [
    "", " ", "0", "1", "-1", "2", "8", "0.5", "nan", "NaN", "inf", "-inf", "1e400", "1e-400",
    BIG_INT, "1e308", "1000000", "1e15", "0x10", "1_000", "1,2", "100%", "$5", "abc",
    "\x00", "é", "-", "--", "x" * 5000, "2026-13-45", "2026-12-01", "7d", "24h", "90m",
    "99999999999999999999d", "-5d", "label:", "label:team", "team", "H100", "A100-80GB",
    "L4", "aws", "gcp", "azure", "us-east-1", "us-central1", "eastus", "spot", "on_demand",
    "reserved_1y", "7e9", "1e9", "4096", "bf16", "adamw", "i-0fuzz", "2h", "4h", "1h30m",
    "cost", "time", "USD", "EUR",
]  # fmt: skip


SIZES = ["0", "-1", "1", "3", "nan", "1e400", BIG_INT, "abc", "10001", "999999"]


def _leaves(
    parser: argparse.ArgumentParser, prefix: tuple[str, ...]
) -> dict[tuple[str, ...], list[Option]]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        options = [
            ((a.option_strings or [a.dest])[-1], a)
            for a in parser._actions
            if not isinstance(a, argparse._HelpAction) and a.dest != "action"
        ]
        return {prefix: options}
    found: dict[tuple[str, ...], list[Option]] = {}
    for sub in subs:
        for name, child in sub.choices.items():
            found.update(_leaves(child, (*prefix, name)))
    return found


COMMANDS = {k: v for k, v in _leaves(build_parser(), ()).items() if k not in SKIPPED}


def _paths(hostile: Hostile) -> list[str]:
    return [
        *(str(p) for p in hostile.files.values()),
        *(str(p) for p in list(hostile.policies.values())[:8]),
        *(str(p) for p in hostile.jobs.values()),
        *(str(p) for p in list(hostile.traces.values())[:4]),
        str(hostile.good_policy),
        str(hostile.root),
    ]


@st.composite
def argv_for(draw: st.DrawFn, paths: list[str]) -> list[str]:
    command = draw(st.sampled_from(sorted(COMMANDS)))
    options = COMMANDS[command]
    chosen = (
        draw(st.lists(st.sampled_from(options), max_size=6, unique_by=lambda o: o[0]))
        if options
        else []
    )
    argv = list(command)
    if command == ("simulate",):
        argv += ["--instances", "3", "--hours", "3"]  # a later value from the pool wins
    for name, action in chosen:
        value_pool = paths if name in PATH_OPTIONS else HOSTILE_VALUES
        if name == "--write-traces":  # writes: never into the shared corpus folders
            value_pool = [p for p in paths if "traces-" not in p]
        if command == ("simulate",) and name in ("--instances", "--hours"):
            value_pool = SIZES  # bad sizes, not slow ones (the cap itself is tested below)
        if action.choices:
            value_pool = [*map(str, action.choices), *HOSTILE_VALUES[:12]]
        if action.nargs == 0:
            argv.append(name)
            continue
        values = [draw(st.sampled_from(value_pool))]
        if action.nargs in ("+", "*") and draw(st.booleans()):
            values.append(draw(st.sampled_from(value_pool)))
        if action.option_strings:
            argv.append(name)
        argv.extend(values)
    return argv


@settings(
    max_examples=400,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_arguments_to_any_command(hostile: Hostile, data: st.DataObject) -> None:
    argv = data.draw(argv_for(_paths(hostile)))
    result = run_cli(argv)
    found = problems_with(result)
    assert not found, f"{describe(result)}: " + "; ".join(found)
    assert "fuzz-secret-never-printed" not in result.out + result.err
    if result.code == 2:  # bad input: said in a line that names the error
        assert "error" in result.err + result.out, f"{describe(result)}: exit 2, no error line"


def test_every_command_is_fuzzed() -> None:
    names = {" ".join(k) for k in COMMANDS}
    assert {"catalog", "gpus", "estimate", "policy check", "policy show", "budget", "simulate",
            "fleet", "stop-idle", "snooze", "history", "savings"} <= names  # fmt: skip


@pytest.mark.parametrize(
    "argv",
    [
        ["tui", "--catalog-dir", "/does/not/exist"],
        ["tui", "--catalog-dir", "/dev/zero"],
        ["tui", "--bogus"],
        ["catalog", "refresh", "--bogus"],
        ["catalog", "refresh", "--provider", "nowhere", "--dry-run"],
        ["catalog", "bogus-action"],
        ["catalog", "import", "/does/not/exist", "--format", "skypilot", "--dry-run"],
        ["catalog", "import", "/dev/zero", "--format", "skypilot", "--dry-run"],
        ["catalog", "import", ".", "--format", "nope"],
        ["stop-idle", "--policy", "x.yaml", "--lock-wait", "nan"],
        ["stop-idle", "--policy", "x.yaml", "--lock-wait", "inf"],
        ["stop-idle", "--policy", "x.yaml", "--lock-wait", "-1"],
        ["catalog", "--catalog-dir", "/does/not/exist"],
        ["gpus", "--catalog-dir", "/does/not/exist"],
        ["nonsense"],
        ["simulate", "--instances", "10000", "--hours", "8784"],
        ["simulate", "--instances", "1000000"],
        [],
    ],
    ids=lambda argv: " ".join(argv) or "(no arguments)",
)
def test_fixed_bad_arguments_exit_2(argv: list[str], tmp_path: Path) -> None:
    result = run_cli(argv)
    assert not problems_with(result, (2,)), f"{describe(result)}: {result.err[-500:]}"


def test_catalog_import_of_hostile_folders(hostile: Hostile, tmp_path: Path) -> None:
    for kind in ("fifo", "dev-zero", "huge-sparse", "nul-bytes", "bad-utf8", "empty"):
        folder = tmp_path / kind
        (folder / "aws").mkdir(parents=True)
        source = hostile.files[kind]
        target = folder / "aws" / "vms.csv"
        if source.is_file() and source.stat().st_size < 1024:
            target.write_bytes(source.read_bytes())
        else:
            target.symlink_to(source)
        argv = ["catalog", "import", str(folder), "--format", "skypilot", "--dry-run"]
        result = run_cli(argv)
        assert not problems_with(result, (2,)), f"{describe(result)}: {result.err[-500:]}"
