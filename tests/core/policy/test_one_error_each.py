"""One true error per mistake, at its own line (issue 37): an unsupported ``version`` is
not also "missing", and a key without its colon is placed on its own line, not the next
(in a policy and in an estimate job file)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from tests.fakes.policy_fixtures import VALID


def _errors(err: str) -> list[str]:
    return [ln.removeprefix("gpuplan: error: ") for ln in err.splitlines() if "error:" in ln]


def test_an_unsupported_version_is_one_error(
    write_policy: Callable[[str | bytes, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_policy(VALID.replace("version: 1", "version: 2"), "v2.yaml")
    assert main(["policy", "check", str(path)]) == 2
    errors = _errors(capsys.readouterr().err)
    assert errors == [
        f"{path}:1:10: version: unsupported policy version 2; this gpuplan reads version 1"
    ]


@pytest.mark.parametrize("key", ["name", "scope"])
def test_a_key_without_its_colon_is_placed_on_its_line(
    key: str,
    write_policy: Callable[[str | bytes, str], Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = VALID.splitlines()
    number = next(i for i, ln in enumerate(lines, 1) if ln.startswith(f"{key}:"))
    lines[number - 1] = lines[number - 1].replace(f"{key}:", key, 1)
    path = write_policy("\n".join(lines) + "\n", "colon.yaml")
    assert main(["policy", "check", str(path)]) == 2
    (error,) = _errors(capsys.readouterr().err)
    assert error.startswith(f"{path}:{number}:1: not valid YAML"), error


def test_a_job_file_key_without_its_colon_is_placed_on_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    job = tmp_path / "job.yaml"
    job.write_text("gpu: H100\nparams 7B\ntokens: 1T\n", encoding="utf-8")
    assert main(["estimate", "--job", str(job)]) == 2
    (error,) = _errors(capsys.readouterr().err)
    assert error.startswith(f"{job}:2: not valid YAML"), error
