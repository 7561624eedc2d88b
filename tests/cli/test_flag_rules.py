"""Every flag of every command is placed in the flag table, and each rule holds (issue 33).

On main, flags that do nothing in the combination given were ignored with exit 0
(``fleet --since nan`` without ``--report``, ``--wide`` with ``--json``); now each is
exit 2 with a line naming the flag it needs or the mode it does nothing in. The walk
below fails for a new flag that is in neither ``RULES`` nor ``ALWAYS``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from gpuplan.cli.catalog_refresh_cmd import _import_parser, _refresh_parser
from gpuplan.cli.flag_rules import ALWAYS, RULES, Needs, Useless, command_parsers
from gpuplan.cli.main import build_parser, main


def every_parser() -> dict[str, argparse.ArgumentParser]:
    found = command_parsers(build_parser())
    for name, build in (("refresh", _refresh_parser), ("import", _import_parser)):
        parser = argparse.ArgumentParser(prog=f"gpuplan catalog {name}")
        build(parser)
        found[f"catalog {name}"] = parser
    return found


def flags_of(parser: argparse.ArgumentParser) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings if s.startswith("--")} - {"--help"}


def test_every_flag_of_every_command_is_placed_once() -> None:
    parsers = every_parser()
    assert set(ALWAYS) == set(parsers)
    assert set(RULES) <= set(parsers)
    for name, parser in parsers.items():
        ruled = {r.flag for r in RULES.get(name, ())}
        assert not ruled & ALWAYS[name], name
        assert ruled | ALWAYS[name] == flags_of(parser), name
        for rule in RULES.get(name, ()):
            needed = rule.any_of if isinstance(rule, Needs) else rule.modes
            assert set(needed) <= flags_of(parser), (name, rule)


BASE = {
    "catalog": ["catalog"],
    "gpus": ["gpus"],
    "estimate": ["estimate", "--params", "7B", "--tokens", "20B"],
    "budget": ["budget", "--policy", "p.yaml"],
    "bill reconcile": ["bill", "reconcile", "--policy", "p.yaml"],
    "simulate": ["simulate"],
    "fleet": ["fleet"],
    "stop-idle": ["stop-idle", "--policy", "p.yaml"],
    "schedule": ["schedule", "--policy", "p.yaml"],
    "savings": ["savings"],
    "waste": ["waste"],
    "history": ["history"],
    "audit": ["audit", "--traces", "t"],
}
VALUES = {"--seed": "3", "--instances": "4", "--hours": "5", "--interval": "10", "--shard": "0/2"}


def written(
    parser: argparse.ArgumentParser, flag: str, values: dict[str, str] = VALUES
) -> list[str]:
    """``flag`` as a person would write it, with a value when it takes one."""
    action = next(a for a in parser._actions if flag in a.option_strings)
    return [flag] if action.nargs == 0 else [flag, values.get(flag, "1")]


CASES = [(name, rule) for name, rules in sorted(RULES.items()) for rule in rules]


@pytest.mark.parametrize(
    ("name", "rule"), CASES, ids=[f"{n} {r.flag} {type(r).__name__}" for n, r in CASES]
)
def test_a_flag_that_would_do_nothing_is_exit_2_naming_what_it_needs(
    name: str, rule: Needs | Useless, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    values = {**VALUES, "--catalog-dir": str(tmp_path), "--db": str(tmp_path / "l.db")}
    parser = every_parser()[name]
    argv = [*BASE[name], *written(parser, rule.flag, values)]
    other = rule.any_of[0] if isinstance(rule, Needs) else rule.modes[0]
    if isinstance(rule, Useless):
        argv += written(parser, other, values)
    assert main(argv) == 2, argv
    out = capsys.readouterr()
    assert out.out == ""
    (line,) = out.err.splitlines()
    assert line.startswith(f"gpuplan: error: {name}: {rule.flag} ") and other in line, line
    if isinstance(rule, Needs):  # with what it needs, this check lets it through
        assert f"{rule.flag} goes with" not in _err_of(
            [*argv, *written(parser, other, values)], capsys
        )


def _err_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    main(argv)
    return capsys.readouterr().err


def test_fleet_since_nan_without_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fleet", "--since", "nan"]) == 2
    assert "--since goes with --report" in capsys.readouterr().err


def test_an_abbreviated_flag_is_caught_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fleet", "--sinc", "3d"]) == 2
    assert "--since goes with --report" in capsys.readouterr().err


@pytest.mark.parametrize(
    "region", ["a b", "us-east-1\ngpuplan: notice: forged", "US_EAST", "x" * 80]
)
def test_a_garbage_refresh_region_is_bad_input(
    region: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # On main: exit 1 after asking each cloud's API for it ("region failed").
    argv = ["catalog", "refresh", "--region", region, "--catalog-dir", str(tmp_path)]
    assert main(argv) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "--region" in line and "not a region name" in line, line
    assert list(tmp_path.iterdir()) == []


CATALOG_VALUES = {**VALUES, "--sort": "price", "--pricing": "spot", "--max-age": "30d"}


@pytest.mark.parametrize("action", ["refresh", "import"])
@pytest.mark.parametrize("flag", sorted(flags_of(every_parser()["catalog"])))
def test_a_listing_flag_before_a_catalog_action_is_exit_2(
    action: str, flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # On main: `catalog --gpu H100 refresh` ran the refresh and dropped --gpu, exit 0/1.
    values = {**CATALOG_VALUES, "--catalog-dir": str(tmp_path)}
    before = written(every_parser()["catalog"], flag, values)
    argv = ["catalog", *before, action, "--dry-run", "--catalog-dir", str(tmp_path)]
    assert main(argv) == 2, argv
    (line,) = capsys.readouterr().err.splitlines()
    assert f"catalog: {flag} before {action} does nothing" in line, line
    assert list(tmp_path.iterdir()) == []


def test_the_first_listing_flag_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "--top", "3", "--gpu", "H100", "refresh", "--dry-run"]) == 2
    assert "catalog: --top before refresh" in capsys.readouterr().err


def test_threshold_with_sweep_is_allowed_with_traces(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # With --traces the threshold also says which minutes count as idle: not refused.
    main(["simulate", "--sweep", "--threshold", "3", "--traces", str(tmp_path / "none")])
    assert "does nothing" not in capsys.readouterr().err


SAMPLES_WORK = ["estimate", "--samples", "1B", "--flops-per-sample", "1e12", "--gpu", "H100"]
MODEL_VALUES = {"--optimizer": "sgd", "--recompute": "full", "--method": "full", "--zero": "1"}


@pytest.mark.parametrize(
    "flag",
    ["--seq-len", "--layers", "--hidden", "--heads", "--vocab", "--optimizer", "--zero", "--fsdp",
     "--recompute", "--micro-batch", "--global-batch", "--method", "--lora-rank"],
)  # fmt: skip
def test_a_model_flag_with_samples_work_names_params(
    flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # On main each was dropped (same table, exit 0): samples work has no shape or memory.
    parser = every_parser()["estimate"]
    assert main([*SAMPLES_WORK, *written(parser, flag, MODEL_VALUES)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert f"{flag} needs --params with --tokens" in line, line


def test_a_model_key_in_a_job_file_with_samples_work_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = tmp_path / "job.yaml"
    job.write_text("samples: 1B\nflops_per_sample: 1e12\nheads: 8\n")
    assert main(["estimate", "--job", str(job)]) == 2
    err = capsys.readouterr().err
    assert "heads" in err and "needs --params" in err and str(job) in err, err


def test_checkpoint_every_needs_spot_pricing(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["estimate", "--params", "7B", "--tokens", "20B", "--gpu", "H100", "--gpus", "8"]
    assert main([*base, "--pricing", "on-demand", "--checkpoint-every", "2h"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "--checkpoint-every needs spot pricing (--pricing spot)" in line, line
    assert main([*base, "--pricing", "spot,on-demand", "--checkpoint-every", "2h"]) == 0
    assert main([*base, "--checkpoint-every", "2h"]) == 0


def test_compare_gpus_reads_the_job_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # On main --compare-gpus planned before the job file was read: "--params is required".
    job = tmp_path / "job.yaml"
    job.write_text("params: 7B\ntokens: 1T\n")
    assert main(["estimate", "--job", str(job), "--compare-gpus", "--gpus", "64", "--json"]) == 0
    by_job = capsys.readouterr().out
    argv = ["estimate", "--params", "7B", "--tokens", "1T", "--compare-gpus", "--gpus", "64"]
    assert main([*argv, "--json"]) == 0
    assert capsys.readouterr().out == by_job
