"""``gpuplan tui`` parses its options into the handler that starts the app."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gpuplan.cli import tui_cmd
from gpuplan.cli.main import build_parser


def test_tui_options_parse(tmp_path: Path) -> None:
    c = str(tmp_path)  # --catalog-dir must name an existing folder
    args = build_parser().parse_args(
        ["tui", "--policies", "p", "--policy", "p/a.yaml", "--db", "x.db", "--catalog-dir", c]
    )
    assert args.handler is tui_cmd.run
    assert (args.policies, args.policy, args.db, args.catalog_dir) == ("p", "p/a.yaml", "x.db", c)


def test_tui_defaults_to_the_policies_folder() -> None:
    args = build_parser().parse_args(["tui"])
    assert (args.policies, args.policy, args.db, args.catalog_dir) == ("policies", None, None, None)


def test_tui_help_is_listed() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "gpuplan", "tui", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "--policies DIR" in out and "--policy FILE" in out
