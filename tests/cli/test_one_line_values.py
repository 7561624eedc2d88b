"""A newline inside a value from input or a provider cannot start a line (issue 33).

On main, ``gpuplan snooze $'i-1\\ngpuplan: notice: forged' ...`` printed a forged
``gpuplan: notice:`` line; so did ``catalog refresh --region``, ``estimate --region`` and
a policy key with a newline. Errors, notices and warnings are one line per problem with
every control character of the values escaped (``\\n``); table cells likewise. gpuplan's
own multi-line output (tables, several problems) still has its line breaks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.cli.render import render_table
from tests.fakes.aws_world import World

FORGED = "us-east-1\ngpuplan: notice: forged"


def forged_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.startswith("gpuplan: notice: forged")]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_snooze_of_a_forged_instance_id(
    world: World, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "version: 1\nname: x\nscope:\n  aws: {regions: [us-east-1]}\n"
        "idle: {allow_data_loss: false}\n",
        encoding="utf-8",
    )
    code, out, err = run(
        ["snooze", "i-1\ngpuplan: notice: forged", "--for", "1h", "--policy", str(policy)],
        capsys,
    )
    assert code == 2
    assert not forged_lines(out + err)
    (line,) = err.splitlines()
    assert line.startswith("gpuplan: error: i-1\\ngpuplan: notice: forged"), line


def test_catalog_refresh_region(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["catalog", "refresh", "--region", FORGED, "--catalog-dir", str(tmp_path)]
    code, out, err = run(argv, capsys)
    assert code == 2
    assert not forged_lines(out + err)
    assert len(err.splitlines()) == 1 and "us-east-1\\ngpuplan" in err


@pytest.mark.parametrize("region", [FORGED, f"{FORGED}\tx\x1b[2J"])
def test_estimate_region(region: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["estimate", "--params", "7B", "--tokens", "20B", "--region", region]
    code, out, err = run(argv, capsys)
    assert code == 2
    assert not forged_lines(out + err)
    (line,) = err.splitlines()
    assert "\\ngpuplan: notice: forged" in line and "\x1b" not in line


def test_a_policy_key_with_a_newline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text(
        'version: 1\nname: x\nscope: {}\n"a\\ngpuplan: notice: forged": 1\n'
        "budget: {monthly_usd: -1}\n",
        encoding="utf-8",
    )
    for argv in (["policy", "check", str(policy)], ["budget", "--policy", str(policy)]):
        code, out, err = run(argv, capsys)
        assert code == 2
        assert not forged_lines(out + err)
        errors = [ln for ln in err.splitlines() if ln.startswith("gpuplan: error: ")]
        assert len(errors) == 2  # two problems, two lines: gpuplan's own breaks are kept
        assert "a\\ngpuplan: notice: forged: unknown key" in errors[0]


def test_a_table_cell_stays_on_its_row() -> None:
    table = render_table(["region", "price"], [[FORGED, "1.00"], ["eu-west-1", "2.00"]])
    lines = table.splitlines()
    assert len(lines) == 4  # header, rule, two rows
    assert not forged_lines(table)
    assert lines[2].startswith("us-east-1\\ngpuplan: notice: forged")


def test_a_notice_carries_a_value_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from gpuplan.cli.output import say

    say("notice", f"scope {FORGED}: credentials missing")
    (line,) = capsys.readouterr().err.splitlines()
    assert line == "gpuplan: notice: scope us-east-1\\ngpuplan: notice: forged: credentials missing"
