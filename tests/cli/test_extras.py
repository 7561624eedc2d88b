"""Extras per cloud: the first command needs no SDK, and a command whose cloud's SDK (or
the TUI's Textual) is missing says which extra to install in one line, exit 2.

Nothing is uninstalled: each command runs in a child interpreter whose ``sys.modules``
holds ``None`` for the blocked packages, which is what Python does for a package that is
not there (``ModuleNotFoundError`` on import)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SDKS = ("boto3", "botocore", "google", "grpc", "azure", "msal")
TUI = ("textual", "rich")
RUN = (
    "import sys\n"
    "blocked, args = [n for n in sys.argv[1].split(',') if n], sys.argv[2:]\n"
    "for name in blocked: sys.modules[name] = None\n"
    "from gpuplan.cli.main import main\n"
    "code = main(args)\n"
    "loaded = sorted(n for n in blocked if sys.modules.get(n) is not None)\n"
    "assert not loaded, loaded\n"
    "raise SystemExit(code)\n"
)


def _gpuplan(
    blocked: tuple[str, ...], *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", RUN, ",".join(blocked), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def _policy(tmp_path: Path, scope: str) -> Path:
    path = tmp_path / f"{scope.split(':')[0]}.yaml"
    path.write_text(f"version: 1\nname: team\nscope:\n  {scope}\nidle:\n  allow_data_loss: false\n")
    return path


@pytest.mark.parametrize(
    "args",
    [
        ("estimate", "--params", "7B", "--tokens", "1T", "--json"),
        ("catalog", "--gpu", "H100", "--json"),
    ],
)
def test_the_first_commands_run_with_no_sdk_and_no_tui(tmp_path: Path, args: tuple[str]) -> None:
    done = _gpuplan(SDKS + TUI, *args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(("{", "["))


@pytest.mark.parametrize(
    ("blocked", "scope", "extra"),
    [
        (("boto3", "botocore"), "aws: {regions: [us-east-1]}", "aws"),
        (("google",), "gcp: {projects: [lab-1], zones: [us-central1-a]}", "gcp"),
        (("azure",), "azure: {subscriptions: [00000000-0000-0000-0000-000000000000]}", "azure"),
    ],
)
@pytest.mark.parametrize("command", ["fleet", "stop-idle"])
def test_a_fleet_command_without_its_cloud_sdk_names_the_extra(
    tmp_path: Path, blocked: tuple[str, ...], scope: str, extra: str, command: str
) -> None:
    policy = _policy(tmp_path, scope)
    ledger = ("--db", str(tmp_path / "l.db")) if command == "stop-idle" else ()
    done = _gpuplan(blocked, command, "--policy", str(policy), *ledger, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.endswith(f"pip install 'gpuplan[{extra}]'") and "Traceback" not in done.stderr
    assert line.startswith(f"gpuplan: error: {extra}: needs ")
    if (tmp_path / "l.db").exists():  # stop-idle opens its ledger first: no run recorded
        history = _gpuplan((), "history", "--db", str(tmp_path / "l.db"), "--json", cwd=tmp_path)
        assert history.returncode == 0 and json.loads(history.stdout) == []


def test_a_price_refresh_without_the_sdk_names_the_extra(tmp_path: Path) -> None:
    done = _gpuplan(
        ("boto3", "botocore"),
        "catalog",
        "refresh",
        "--provider",
        "aws",
        "--region",
        "us-east-1",
        "--dry-run",
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().endswith("pip install 'gpuplan[aws]'")
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_tui_without_textual_names_the_extra(tmp_path: Path) -> None:
    done = _gpuplan(TUI, "tui", "--policies", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.endswith("pip install 'gpuplan[tui]'")


def test_a_module_no_extra_provides_is_not_hidden() -> None:
    from gpuplan.usecases.clouds.extras import needs_extra

    with pytest.raises(ModuleNotFoundError), needs_extra("x"):
        import gpuplan_no_such_module  # type: ignore[import-not-found]  # noqa: F401
