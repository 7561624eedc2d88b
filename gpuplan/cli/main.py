"""``gpuplan`` entry point: builds the parser, dispatches, maps errors to exit codes.

Exit codes everywhere: 0 success, 1 the work partly failed or found nothing feasible,
2 bad input. Command modules import only the standard library and the core at module
level; cloud SDKs and Textual load inside the handlers that need them.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from gpuplan import __version__
from gpuplan.cli.common import Handler, exact_help
from gpuplan.cli.output import guarded_output
from gpuplan.cli.render import set_wide
from gpuplan.core.errors import GpuplanError
from gpuplan.core.wording import shown, shown_line
from gpuplan.usecases.clouds.entries import register_facts

COMMANDS = {
    "catalog": "catalog_cmd",
    "gpus": "gpus_cmd",
    "estimate": "estimate_cmd",
    "policy": "policy_cmd",
    "budget": "budget_cmd",
    "bill": "bill_cmd",
    "simulate": "simulate_cmd",
    "tui": "tui_cmd",
    "fleet": "fleet_cmd",
    "stop-idle": "stop_idle_cmd",
    "schedule": "schedule_cmd",
    "snooze": "snooze_cmd",
    "restore": "restore_cmd",
    "history": "history_cmd",
    "savings": "savings_cmd",
    "waste": "waste_cmd",
    "audit": "audit_cmd",
    "exporter": "exporter_cmd",
}
"""Each command and the module in ``gpuplan.cli`` that registers it, in ``--help`` order.
A run imports only its own command's module (``gpuplan estimate`` pays for no other)."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors that still exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        # One prefix for every error, argparse's or ours: "gpuplan: error: ...".
        # Secrets redacted and control characters escaped here too (the TUI's parser
        # runs outside the guarded streams).
        self.exit(2, f"gpuplan: error: {shown(message)} (see '{self.prog} --help')\n")

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> object:
        # One rule for every string flag and argument of every command: a blank value
        # (``--gpu ''``, ``--provider ' , '``) is bad input, never "no filter".
        # A command or a remainder is checked by the parser that reads it.
        sub = isinstance(action, argparse._SubParsersAction) or action.nargs == argparse.REMAINDER
        for text in [] if sub else arg_strings:
            if isinstance(text, str) and not text.strip(" ,\t\n"):
                name = "/".join(action.option_strings) or action.metavar or action.dest
                self.error(f"argument {name}: expected a value, got {text!r}")
            if action.type in (int, float) and not text.isascii():
                name = "/".join(action.option_strings) or action.dest
                self.error(f"argument {name}: numbers are written with ASCII digits, got {text!r}")
        return super()._get_values(action, arg_strings)

    def format_usage(self) -> str:
        return shown(super().format_usage())

    def format_help(self) -> str:
        exact_help(self)
        return super().format_help()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or with ``command`` only that command's (what one run needs)."""
    parser = _Parser(
        prog="gpuplan",
        description="What GPUs cost, what a training job will cost, and who pays for idle GPUs.",
    )
    parser.add_argument("--version", action="version", version=f"gpuplan {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in [command] if command in COMMANDS else COMMANDS:
        importlib.import_module(f"gpuplan.cli.{COMMANDS[name]}").register(sub)
    return parser


def _command(words: list[str]) -> str | None:
    """The command word when it comes first (options before it mean: build every command,
    so that argparse's own messages, ``--help`` included, stay the same)."""
    return words[0] if words and words[0] in COMMANDS else None


def _command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The parser of ``command`` (``gpuplan estimate``), else the whole one."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found: argparse.ArgumentParser | None = action.choices.get(command)
            return found or parser
    return parser


def _check_flags(
    parser: argparse.ArgumentParser, args: argparse.Namespace, words: list[str]
) -> None:
    """The flag table (:mod:`gpuplan.cli.flag_rules`) on the command's own words."""
    from gpuplan.cli.flag_rules import check_before_action, check_flags, command_parsers

    parsers = command_parsers(parser)
    names = [n for n in parsers if n.split()[0] == args.command]
    name = next((n for n in names if set(n.split()[1:]) <= set(words)), args.command)
    action = getattr(args, "action", None)  # ``catalog ACTION ...``: the action's own flags
    own = words[: len(words) - len(action)] if action else words
    if action and name in parsers:
        check_before_action(parsers[name], args, own, action[0])
    if name in parsers:
        check_flags(name, parsers[name], args, own)


MAX_ARGUMENT = 4096
"""Characters per command-line argument: longer is a mistake or an attack (a 5,000-digit
number would otherwise reach ``int()`` and its digit limit deep inside a command)."""


def main(argv: Sequence[str] | None = None) -> int:
    register_facts()  # every listed cloud's facts (no SDK): before any provider name is read
    words = list(sys.argv[1:] if argv is None else argv)
    if _command(words) == "tui":
        # Textual draws the screen itself (its text is escaped there); the TUI's own
        # errors before the screen opens still pass through ``shown``.
        return _run(words)
    with guarded_output(words):
        return _run(words)


def _run(words: list[str]) -> int:
    for word in words:
        if len(word) > MAX_ARGUMENT:
            print(
                f"gpuplan: error: an argument of {len(word):,} characters "
                f"({shown(word)[:20]!r}...); at most {MAX_ARGUMENT:,}",
                file=sys.stderr,
            )
            return 2
    parser = build_parser(_command(words))
    args, extra = parser.parse_known_args(words)
    if extra:  # said by the command's own parser, which names its own --help
        _command_parser(parser, args.command).error(f"unrecognized arguments: {' '.join(extra)}")
    handler: Handler = args.handler
    set_wide(bool(getattr(args, "wide", False)))
    try:
        _check_flags(parser, args, words)
        return handler(args)
    except GpuplanError as exc:
        # One line per problem: a newline inside a value (a region, an instance id, a
        # policy key) is escaped, so it cannot start a line of its own.
        for line in exc.lines:
            print(f"gpuplan: error: {shown_line(line)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("gpuplan: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (``| head``); not an error worth a traceback.
        return 0
    except ArithmeticError as exc:
        # A number no check caught reached arithmetic it cannot do: bad input, one line.
        print(f"gpuplan: error: a number out of range ({type(exc).__name__})", file=sys.stderr)
        return 2
    except RecursionError:
        # A symlink loop or a nesting no reader bounded: one line, nothing done.
        print("gpuplan: error: input nested too deeply (a symlink loop?)", file=sys.stderr)
        return 2
    except OSError as exc:
        # File-system trouble no loader turned into a sentence: still one line, no traceback.
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"gpuplan: error: {shown(where)}{exc.strerror or exc}", file=sys.stderr)
        return 2 if exc.filename else 1
    except Exception as exc:
        # A ledger damaged past its header (pages, indexes): one line, nothing done. sqlite3
        # is only loaded by commands that open a ledger (``estimate`` does not pay for it).
        sqlite3 = sys.modules.get("sqlite3")
        if sqlite3 is None or not isinstance(exc, sqlite3.DatabaseError):
            raise
        print(f"gpuplan: error: the ledger cannot be read: {shown(str(exc))}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
