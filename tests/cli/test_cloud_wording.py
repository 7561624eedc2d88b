"""Help text that names the clouds is built from the registry's entries, when printed.

Building the parser loads no registry (nor pydantic); ``--help`` puts in each registered
cloud's words (``cost_api``, ``account_kind``, ``reservations``), a cloud registered at
run time included.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import Iterator

import pytest

from gpuplan.cli.main import main
from gpuplan.usecases.clouds import registry as cloud_registry
from tests.fakes.toycloud.entry import ENTRY

TOY = dataclasses.replace(ENTRY, title="Toycloud", account_kind="realm", reservations="pledges")


@pytest.fixture
def toy() -> Iterator[None]:
    cloud_registry.register(TOY)
    try:
        yield
    finally:
        cloud_registry.unregister(TOY.provider)


def _help(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as done:
        main([*args, "--help"])
    assert done.value.code == 0
    return " ".join(capsys.readouterr().out.split())


def test_building_the_parser_loads_no_registry() -> None:
    code = (
        "import sys; from gpuplan.cli.main import build_parser; build_parser(); "
        "print(sorted(m for m in ('pydantic', 'gpuplan.usecases.clouds.registry') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


def test_bill_help_names_each_cost_api(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(["bill"], capsys)
    named = [e.cost_api for e in cloud_registry.entries() if e.cost_sources is not None]
    assert len(named) >= 3
    listed = ", ".join(named[:-1]) + " and " + named[-1]
    assert f"Read actual daily spend from {listed} (read-only)" in text


def test_a_registered_cloud_is_named_in_the_help(
    toy: None, capsys: pytest.CaptureFixture[str]
) -> None:
    by = _help(["fleet"], capsys)
    assert "AWS account, GCP project, Azure subscription or Toycloud realm" in by
    savings = _help(["savings"], capsys)
    assert "active AWS reserved instances and Toycloud pledges in its regions" in savings


def test_without_it_the_help_is_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    assert "(AWS account, GCP project or Azure subscription)" in _help(["waste"], capsys)
    assert "Toycloud" not in _help(["savings"], capsys)
