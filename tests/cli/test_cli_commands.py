"""The command table in ``cli.main``: each module registers exactly its own command, and a
run builds only the parser of the command it names."""

from __future__ import annotations

import argparse
import importlib

import pytest

from gpuplan.cli.main import COMMANDS, build_parser, main


def _registered(module: str) -> list[str]:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    importlib.import_module(f"gpuplan.cli.{module}").register(sub)
    return list(sub.choices)


@pytest.mark.parametrize(("command", "module"), sorted(COMMANDS.items()))
def test_each_module_registers_exactly_its_command(command: str, module: str) -> None:
    assert _registered(module) == [command]


def test_the_whole_parser_has_every_command_in_table_order() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == list(COMMANDS)


def test_one_command_parser_parses_like_the_whole_one() -> None:
    words = ["estimate", "--params", "7B", "--tokens", "1T", "--json"]
    whole = vars(build_parser().parse_args(words))
    alone = vars(build_parser("estimate").parse_args(words))
    assert whole == alone


def test_an_option_before_the_command_still_gets_argparse_message(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--bogus", "estimate"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("gpuplan: error: unrecognized arguments: --bogus (see '")
    assert err.count("\n") == 1  # one line (issue 37)
    assert "Traceback" not in err
