"""The estimate path: no heavy import, and the same plan from the fast catalog reader as
from the validated one (``--json`` identical in content)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, date, datetime

import pytest

from gpuplan.cli import estimate_render as render
from gpuplan.core.catalog.query import Catalog
from gpuplan.loaders.catalog import load_catalog
from gpuplan.usecases.planner.estimate import EstimateArgs, estimate

HEAVY = ("pydantic", "pydantic_core", "yaml", "textual", "rich", "boto3", "botocore", "google",
         "azure", "grpc", "httpx", "moto")  # fmt: skip
RUN = """
import contextlib, io, sys
from gpuplan.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})
heavy += sorted(m for m in sys.modules if m.endswith("_cmd") and not m.endswith(".estimate_cmd"))
print(code, ",".join(heavy))
"""


@pytest.mark.parametrize(
    "extra",
    [[], ["--json"], ["--csv", "--all"], ["--explain", "--show-infeasible"], ["--gpu", "H100"]],
)
def test_estimate_imports_no_heavy_module_nor_other_command(extra: list[str]) -> None:
    argv = ["estimate", "--params", "7B", "--tokens", "1T", *extra]
    done = subprocess.run(
        [sys.executable, "-c", RUN.format(heavy=HEAVY), *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    code, _, heavy = done.stdout.strip().partition(" ")
    assert code == "0"
    assert heavy == ""


def _json(catalog: Catalog, capsys: pytest.CaptureFixture[str], **args: object) -> object:
    values = EstimateArgs(params="7B", tokens="1T", **args)  # type: ignore[arg-type]
    result = estimate(catalog, values, None, today=date(2026, 12, 2))
    render.print_plan_json(result, 10, None, every=True, left_out=True)
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    "args",
    [{}, {"gpu": ["H100"], "gpus": "64"}, {"pricing": ["reserved_1y", "capacity_block"]}],
)
def test_fast_and_validated_catalogs_give_the_same_json(
    capsys: pytest.CaptureFixture[str], args: dict[str, object]
) -> None:
    now = datetime(2026, 12, 2, tzinfo=UTC)
    fast = _json(load_catalog(now=now, fast=True), capsys, **args)
    slow = _json(load_catalog(now=now), capsys, **args)
    assert fast == slow
    assert isinstance(fast, dict) and fast["options"]
