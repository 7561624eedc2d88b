"""Every value-taking option of every command given each out-of-range number.

Deterministic and exhaustive over the options (read from the parser): NaN, infinity,
1e400, a 4,000-digit integer (under Python's int-parsing limit, so it reaches the
command), a 5,000-digit one (refused at the door) and -1. No traceback, no hang; the
numeric flags listed in ``MUST_REFUSE`` must answer exit 2.
"""

from __future__ import annotations

import pytest

from tests.e2e.fuzz.corpus import BIG_INT
from tests.e2e.fuzz.runner import describe, problems_with, run_cli
from tests.e2e.fuzz.test_arguments import COMMANDS

VALUES = ["nan", "inf", "1e400", "9" * 4000, BIG_INT, "-1"]
NOT_VALUES = {"--policy", "--job", "--traces", "--db", "--catalog-dir", "--write-traces",
              "--policies", "files", "file", "directory", "instance"}  # fmt: skip
PREFIX: dict[tuple[str, ...], list[str]] = {
    ("estimate",): ["--params", "7B", "--tokens", "1T", "--top", "1"],
    ("simulate",): ["--instances", "2", "--hours", "2"],
    ("snooze",): ["i-0fuzz", "--policy", "policies/notify-only.yaml"],
    ("budget",): ["--policy", "/does/not/exist.yaml"],
    ("fleet",): ["--report"],
    ("stop-idle",): ["--policy", "/does/not/exist.yaml"],
}
MUST_REFUSE = {
    ("catalog", "--gpus"), ("catalog", "--min-gpus"), ("catalog", "--max-hourly"),
    ("estimate", "--price-per-gpu-hour"), ("estimate", "--budget"), ("estimate", "--deadline"),
    ("estimate", "--checkpoint-every"), ("estimate", "--mfu"), ("estimate", "--utilization"),
    ("history", "--limit"), ("stop-idle", "--lock-wait"), ("simulate", "--instances"),
    ("simulate", "--hours"), ("simulate", "--interval"), ("snooze", "--for"),
    ("stop-idle", "--concurrency"), ("stop-idle", "--shards"), ("fleet", "--concurrency"),
    ("budget", "--concurrency"), ("snooze", "--concurrency"),
}  # fmt: skip
CASES = [
    (command, name)
    for command, options in sorted(COMMANDS.items())
    for name, action in options
    if name not in NOT_VALUES and action.nargs != 0 and action.option_strings
]


@pytest.mark.parametrize(
    ("command", "name"), CASES, ids=lambda x: " ".join(x) if isinstance(x, tuple) else x
)
def test_out_of_range_numbers(command: tuple[str, ...], name: str) -> None:
    strict = (" ".join(command), name) in MUST_REFUSE
    for value in VALUES:
        result = run_cli([*command, *PREFIX.get(command, []), name, value])
        allowed = (2,) if strict or value == BIG_INT else (0, 1, 2)
        found = problems_with(result, allowed)
        assert not found, f"{describe(result)}: " + "; ".join(found)
