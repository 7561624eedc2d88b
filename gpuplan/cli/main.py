"""``gpuplan`` entry point: builds the parser, dispatches, maps errors to exit codes.

Exit codes everywhere: 0 success, 1 the work partly failed or found nothing feasible,
2 bad input. Command modules import only the standard library and the core at module
level; cloud SDKs and Textual load inside the handlers that need them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from gpuplan import __version__
from gpuplan.cli import (
    budget_cmd,
    catalog_cmd,
    estimate_cmd,
    fleet_cmd,
    gpus_cmd,
    history_cmd,
    policy_cmd,
    savings_cmd,
    simulate_cmd,
    snooze_cmd,
    stop_idle_cmd,
    tui_cmd,
)
from gpuplan.cli.common import Handler
from gpuplan.core.errors import GpuplanError

COMMAND_MODULES = (
    catalog_cmd,
    gpus_cmd,
    estimate_cmd,
    policy_cmd,
    budget_cmd,
    simulate_cmd,
    tui_cmd,
    fleet_cmd,
    stop_idle_cmd,
    snooze_cmd,
    history_cmd,
    savings_cmd,
)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors that still exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        # One prefix for every error, argparse's or ours: "gpuplan: error: ...".
        self.exit(2, f"gpuplan: error: {message}\n(see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gpuplan",
        description="What GPUs cost, what a training job will cost, and who pays for idle GPUs.",
    )
    parser.add_argument("--version", action="version", version=f"gpuplan {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except GpuplanError as exc:
        print(f"gpuplan: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("gpuplan: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``| head``); not an error worth a traceback.
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
