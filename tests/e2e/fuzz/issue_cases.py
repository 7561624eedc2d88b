"""The hostile inputs of issue 28 (items 4-9) and issue 26 (item 4), as one table.

Each case: a name, the command line, the exit codes allowed and the branch that fixes it
(``cli``: the command-line work, tested in ``test_issue_inputs.py``; ``records``: ledger
locations and provider data, fixed and tested elsewhere). ``scripts/hostile_sweep.py``
runs every case as a fresh process; :func:`write_inputs` makes the files they name.
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.fuzz.corpus import BIG_INT, VALID_POLICY

SECRET = "S3cr3tPW-never-printed"
DSN = f"postgresql://user:{SECRET}@db.example.com/ledger"
ESC = "\x1b[2J"


@dataclass(frozen=True)
class Case:
    name: str
    argv: tuple[str, ...]
    allowed: tuple[int, ...] = (2,)
    owner: str = "cli"


def _laughs() -> str:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for p, c in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{c}: &{c} [{', '.join(['*' + p] * 9)}]")
    return "\n".join([*lines, "params: *i", "tokens: 1T", ""])


def write_inputs(root: Path) -> None:
    """The files the cases name, under ``root``."""
    (root / "loop").mkdir(exist_ok=True)
    for a, b in (("a", "b"), ("b", "a")):
        link = root / "loop" / a
        if not link.is_symlink():
            link.symlink_to(root / "loop" / b)
    big = root / "big-gpus"
    big.mkdir(exist_ok=True)
    bundled = Path(__file__).resolve().parents[3] / "pricing" / "gpus.toml"
    text = re.sub(r"launch_year = \d+", f"launch_year = {BIG_INT}", bundled.read_text(), count=1)
    (big / "gpus.toml").write_text(text, encoding="utf-8")
    (root / "laughs.yaml").write_text(_laughs(), encoding="utf-8")
    regions = ", ".join(f"r{i}-x" for i in range(50_000))
    (root / "regions.yaml").write_text(
        VALID_POLICY.replace("[us-east-1]", f"[{regions}]"), encoding="utf-8"
    )
    (root / "good.yaml").write_text(VALID_POLICY, encoding="utf-8")
    (root / f"key{ESC}.yaml").write_text(VALID_POLICY + f"bad{ESC}key: 1\n", encoding="utf-8")
    (root / "insecure.yaml").write_text(
        VALID_POLICY + "notify: {webhook_url: 'http://127.0.0.1:9/x', "
        "allow_insecure_webhook: true}\n",
        encoding="utf-8",
    )
    (root / "pg-job.yaml").write_text("params: 7B\ntokens: 1T\n", encoding="utf-8")


def blank_value_cases() -> list[Case]:
    """``--FLAG ''`` for every option that takes a value, of every command and action."""
    from gpuplan.cli.catalog_refresh_cmd import _import_parser, _refresh_parser
    from gpuplan.cli.main import _Parser, build_parser

    out: list[Case] = []

    def walk(parser: argparse.ArgumentParser, words: tuple[str, ...]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, (*words, name))
            elif action.option_strings and action.nargs != 0 and action.dest != "help":
                flag = action.option_strings[-1]
                out.append(Case(f"blank {' '.join(words)} {flag}", (*words, flag, "")))

    walk(build_parser(), ())
    for name, build in (("refresh", _refresh_parser), ("import", _import_parser)):
        sub = _Parser(prog=name)
        build(sub)
        walk(sub, ("catalog", name))
    return out


def cases(root: Path) -> list[Case]:
    r = str(root)
    good = f"{r}/good.yaml"
    est = ("estimate", "--params", "7B", "--tokens", "1T")
    out = [
        # issue 28 item 4: ledger locations (records branch)
        Case("db keyword DSN", ("history", "--db", f"host=db password={SECRET}"), owner="records"),
        Case("db dash", ("history", "--db", "-"), owner="records"),
        Case("db missing folder", ("history", "--db", f"{r}/no/such/x.db"), owner="records"),
        # item 5: argparse echoing secrets
        Case("secret mistyped flag", ("fleet", "--dbx", DSN)),
        Case("secret unknown arg", ("history", "--db", DSN, "--bogus")),
        Case("secret bad value", ("fleet", "--concurrency", DSN)),
        Case("secret keyword DSN", ("history", "--db", f"host=h password={SECRET}", "--bad")),
        Case("secret query token", ("estimate", "--params", f"https://h/x?token={SECRET}")),
        # item 6: provider data (records branch): catalogs are its own tests; refresh pages
        # item 7: audit honours allow_insecure_webhook
        Case("audit insecure opt-in", ("audit", "--policy", f"{r}/insecure.yaml"), (0, 1)),
        # item 8: tracebacks
        Case("top superscript", (*est, "--top", "²")),
        Case("explain superscript", (*est, "--explain", "²")),
        Case("gpus arabic digit", (*est, "--gpus", "\u0663")),
        Case("mfu arabic digits", (*est, "--mfu", "\u0660.\u0664")),
        Case("refresh symlink loop", ("catalog", "refresh", "--catalog-dir", f"{r}/loop/a")),
        Case(
            "import symlink loop",
            ("catalog", "import", "--format", "skypilot", "--catalog-dir", f"{r}/loop/a", r),
        ),
        Case("overlay symlink loop", ("catalog", "--catalog-dir", f"{r}/loop/a")),
        *[
            Case(f"gpus.toml 5000 digits {cmd[0]}", (*cmd, "--catalog-dir", f"{r}/big-gpus"))
            for cmd in (("gpus",), ("gpus", "--prices"), ("catalog",), est)
        ],
        # item 8: hangs
        Case("billion laughs job", ("estimate", "--job", f"{r}/laughs.yaml")),
        Case("refresh empty provider", ("catalog", "refresh", "--provider", "")),
        Case("refresh blank provider list", ("catalog", "refresh", "--provider", " , ")),
        # item 8: control characters reach the terminal
        Case("esc region", (*est, "--region", ESC)),
        Case("esc gpu", (*est, "--gpu", ESC)),
        Case("esc catalog region", ("catalog", "--region", ESC)),
        Case("esc catalog provider", ("catalog", "--provider", f"aws{ESC}")),
        Case("esc gpus", ("gpus", "--gpu", ESC)),
        Case("esc params", ("estimate", "--params", f"{ESC}7B", "--tokens", "1T")),
        Case("esc instance", ("snooze", f"i-{ESC}", "--policy", good, "--for", "1h")),
        Case("esc policy path", ("policy", "check", f"{r}/no{ESC}.yaml")),
        Case("esc policy key", ("policy", "check", f"{r}/key{ESC}.yaml")),
        Case("esc job path", ("estimate", "--job", f"{r}/{ESC}")),
        Case("esc history limit", ("history", "--limit", ESC)),
        # item 8: a 50,000-region policy refused before the work
        *[
            Case(f"50k regions {' '.join(c)}", (*c, f"{r}/regions.yaml"))
            for c in (("policy", "check"), ("fleet", "--policy"), ("budget", "--policy"))
        ],
        # item 9: the TUI checks its options before the screen opens
        # its own folder name: the records case above may create no/such (issue 28 item 4)
        Case("tui missing db folder", ("tui", "--db", f"{r}/no/tui-folder/x.db")),
        Case("tui keyword db", ("tui", "--db", f"host=h password={SECRET}")),
        Case("tui postgres db", ("tui", "--db", DSN)),
        Case("tui missing policy", ("tui", "--policy", f"{r}/missing.yaml")),
        Case("tui bad policy", ("tui", "--policy", f"{r}/regions.yaml")),
        Case("tui missing policies", ("tui", "--policies", f"{r}/no-such-folder")),
        # issue 26 item 4: one grammar for numbers and durations, absurd values refused
        Case("deadline bare number", (*est, "--deadline", "14")),
        Case("checkpoint bare number", (*est, "--checkpoint-every", "2")),
        Case("max-age bare number", ("catalog", "--max-age", "30")),
        Case("snooze bare number", ("snooze", "i-0fuzz", "--policy", good, "--for", "60")),
        Case("tokens below params", ("estimate", "--params", "7B", "--tokens", "10")),
        Case(
            "tokens below params: a notice",
            ("estimate", "--params", "70B", "--tokens", "7B", "--top", "1"),
            (0, 1),
        ),
        Case("params half", ("estimate", "--params", "0.5", "--tokens", "1T")),
        Case("explain beyond table", (*est, "--explain", "99999")),
        Case(
            "catalog region of other cloud", ("catalog", "--provider", "aws", "--region", "eastus")
        ),
        Case("estimate region of other cloud", (*est, "--provider", "gcp", "--region", "eastus")),
        Case("gpus three accepted", (*est, "--gpus", "3", "--gpu", "H100"), (0, 1)),
        Case("deadline with unit", (*est, "--deadline", "14d", "--top", "1"), (0, 1)),
        Case("max-age with unit", ("catalog", "--max-age", "30d", "--top", "1"), (0, 1)),
    ]
    return out + blank_value_cases()


def names() -> list[str]:
    """Every case's name (for test ids), with no files written."""
    return [c.name for c in cases(Path(os.devnull).parent)]
