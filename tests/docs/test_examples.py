"""Every shell example of README.md and docs/getting-started.md runs, and says what the
prose next to it says (exit code, the rows and numbers it quotes).

The commands are read from the files (``examples.py``), run in bash as a reader would
(``runner.py``: loopback only, fresh HOME), and checked against ``claims.py``, the one
place that says what each should show. A session's commands run once per process, in
order; ``xdist_group`` keeps a session's tests on one worker.
"""

from __future__ import annotations

import json
import re
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.docs.claims import CLAIMS, DOC_ENV, NOT_RUN, SESSIONS, STAND_INS, Claim
from tests.docs.examples import DOCS, Command, commands
from tests.docs.runner import Result, run_session

ALL = [command for doc in DOCS for command in commands(doc)]


def _session(command: Command) -> str:
    return command.doc if SESSIONS[command.doc] == "file" else f"{command.doc}#{command.block}"


_results: dict[str, dict[Command, Result]] = {}
_scratch: dict[str, Path] = {}
"""Each session's scratch folder (its ``tmp/`` is the session's temp folder)."""


def _result(command: Command, scratch_root: pytest.TempPathFactory) -> Result:
    key = _session(command)
    if key not in _results:
        members = [c for c in ALL if _session(c) == key]
        scratch = scratch_root.mktemp("docs-session")
        _scratch[key] = scratch
        with ExitStack() as stack:
            env = dict(DOC_ENV[command.doc])
            for member in members:
                if member.text in STAND_INS and member.text not in NOT_RUN:
                    env.update(stack.enter_context(STAND_INS[member.text](scratch)))
            results = run_session(members, set(NOT_RUN), env, scratch)
        _results[key] = {r.command: r for r in results}
    return _results[key][command]


def _params() -> list[object]:
    params: list[object] = []
    for command in ALL:
        if command.text in NOT_RUN:
            continue
        claim = CLAIMS.get(command.text, Claim())
        marks: list[pytest.MarkDecorator] = [pytest.mark.xdist_group(_session(command))]
        if claim.changing:
            marks.append(
                pytest.mark.xfail(strict=True, reason=f"expected to change: {claim.changing}")
            )
        params.append(pytest.param(command, id=f"{command.doc}:{command.line}", marks=marks))
    return params


def broken(claim: Claim, result: Result) -> list[str]:
    """What of ``claim`` the result does not bear out; empty: all of it."""
    problems = []
    if result.exit != claim.exit:
        problems.append(f"exit {result.exit}, the docs mean {claim.exit}")
    for pattern in claim.shows:
        if not re.search(pattern, result.output, re.MULTILINE):
            problems.append(f"output does not show /{pattern}/")
    if claim.json:
        try:
            json.loads(result.stdout)
        except ValueError as exc:
            problems.append(f"stdout is not JSON: {exc}")
    if set(result.refused) != set(claim.refused):
        problems.append(
            f"tried to reach {sorted(set(result.refused))}, expected {list(claim.refused)}"
        )
    return problems


@pytest.mark.parametrize("command", _params())
def test_example_does_what_the_docs_say(
    command: Command, tmp_path_factory: pytest.TempPathFactory
) -> None:
    result = _result(command, tmp_path_factory)
    problems = broken(CLAIMS.get(command.text, Claim()), result)
    shown = "\n".join(result.output.splitlines()[:40])
    assert not problems, f"{command.id}\n  " + "\n  ".join(problems) + f"\n--- output:\n{shown}"


def test_examples_are_found() -> None:
    """The extraction works: each file has its examples (a broken fence would hide all)."""
    found = {doc: [c.text for c in commands(doc)] for doc in DOCS}
    assert "gpuplan estimate --params 7B --tokens 1T" in found["README.md"]
    assert (
        "gpuplan stop-idle --policy docs/examples/demo-policy.yaml --apply"
        in found["docs/getting-started.md"]
    )
    assert all(len(texts) >= 10 for texts in found.values()), found


@pytest.mark.xdist_group("docs/getting-started.md")
def test_the_walk_through_leaves_nothing_in_the_temp_folder(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The demo's ledger goes to a private ``mktemp -d`` folder the docs remove again: a
    reader following them leaves no file in the shared temp folder (issue 37)."""
    walk = [c for c in ALL if c.doc == "docs/getting-started.md" and c.text not in NOT_RUN]
    _result(walk[0], tmp_path_factory)  # the whole walk-through runs once, in order
    left = sorted(p.name for p in (_scratch["docs/getting-started.md"] / "tmp").iterdir())
    assert left == [], f"left in the temp folder: {left}"


@pytest.mark.parametrize(
    ("table", "keys"),
    [("CLAIMS", CLAIMS), ("NOT_RUN", NOT_RUN), ("STAND_INS", STAND_INS)],
)
def test_every_entry_names_a_documented_command(table: str, keys: dict[str, object]) -> None:
    """An entry whose command left the docs is stale: delete it (or fix its key)."""
    documented = {c.text for c in ALL}
    assert sorted(set(keys) - documented) == [], f"{table} names commands no doc has"


def test_the_guard_refuses_the_network(tmp_path: Path) -> None:
    """The runner's guard works: a command that reaches beyond loopback is refused and
    logged, so an example that calls a real cloud fails instead of reaching it."""
    probe = Command("probe", 1, 1, "probe", 'python3 -c "import socket; '
                    "socket.create_connection(('example.com', 443), timeout=5)\"", "")  # fmt: skip
    [result] = run_session([probe], set(), {}, tmp_path)
    assert result.exit != 0
    assert result.refused == ("example.com",)
    assert "only loopback is allowed" in result.stderr
