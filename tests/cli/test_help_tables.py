"""Help text comes from the tables the parser resolves against (issue 26 item 4):
``estimate --help`` lists every pricing model, provider, precision, optimizer and
recompute mode; the duration and ``--gpus`` grammar is stated as the parser applies it."""

from __future__ import annotations

import re

import pytest

from gpuplan.cli.main import main
from gpuplan.core.catalog.kinds import Precision, PricingModel, Provider
from gpuplan.core.planner.workload import Optimizer, Recompute


def _help(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    return re.sub(r"\s+", " ", capsys.readouterr().out)


def test_estimate_help_lists_every_value_the_parser_takes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    text = _help(capsys, "estimate")
    for enum in (PricingModel, Provider, Precision, Optimizer, Recompute):
        for member in enum:
            assert member.value in text, member
    assert "a bare number is refused" in text
    assert "any count (64, 3)" in text and "powers of two" in text


def test_catalog_help_lists_every_pricing_model(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(capsys, "catalog")
    assert all(m.value in text for m in PricingModel)
    assert "a bare number is refused" in text and "--wide" in text


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["estimate", "--params", "7B", "--tokens", "1T", "--deadline", "14"], "no unit"),
        (["catalog", "--max-age", "30"], "no unit"),
        (["estimate", "--params", "7B", "--tokens", "1T", "--deadline", "14d", "--top", "1"], ""),
    ],
)
def test_one_duration_grammar(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(argv)
    err = capsys.readouterr().err
    assert (code == 2 and needle in err) if needle else code in (0, 1)
