"""A kubeconfig ``scope.kubernetes`` names that is missing, unreadable or not YAML, or a
context it does not hold, is bad input: one line naming the field and the file, exit 2,
no traceback, and no cluster called (issue 35)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan.cli.main import main

KUBECONFIG = """\
apiVersion: v1
kind: Config
current-context: dev
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: s3cr3t-token}}]
contexts:
- {name: dev, context: {cluster: c, user: u}}
- {name: prod, context: {cluster: c, user: u}}
"""


def policy(tmp_path: Path, kubeconfig: Path | None, contexts: str) -> Path:
    line = f"    kubeconfig: {kubeconfig}\n" if kubeconfig else ""
    path = tmp_path / "policy.yaml"
    path.write_text(
        "version: 1\nname: k8s\nidle:\n  allow_data_loss: false\nscope:\n  kubernetes:\n"
        f"{line}    contexts: {contexts}\n",
        encoding="utf-8",
    )
    return path


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.err


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("GPUPLAN_DB", str(tmp_path / "ledger.sqlite3"))


@pytest.mark.parametrize("command", ["fleet", "stop-idle"])
def test_a_missing_kubeconfig_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    missing = tmp_path / "nowhere" / "config"
    code, err = run([command, "--policy", str(policy(tmp_path, missing, "[dev, prod]"))], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "scope.kubernetes.kubeconfig" in lines[0] and str(missing) in lines[0]
    assert "cannot be read" in lines[0] and "Traceback" not in err


def test_an_unknown_context_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(KUBECONFIG, encoding="utf-8")
    code, err = run(["fleet", "--policy", str(policy(tmp_path, config, "[dev, staging]"))], capsys)
    assert code == 2
    assert err.count("\n") == 1
    assert "scope.kubernetes.contexts: 'staging' is not a context in" in err
    assert str(config) in err and "it has: dev, prod" in err
    assert "s3cr3t-token" not in err


@pytest.mark.parametrize(
    ("content", "said"),
    [("contexts: [\n", "not YAML at line 2"), ("- a\n- b\n", "not a kubeconfig")],
)
def test_a_kubeconfig_that_is_not_one_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, said: str
) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(content, encoding="utf-8")
    code, err = run(["fleet", "--policy", str(policy(tmp_path, config, "[dev]"))], capsys)
    assert code == 2 and err.count("\n") == 1
    assert said in err and "scope.kubernetes.kubeconfig" in err and "Traceback" not in err


def test_the_default_kubeconfig_is_named_when_none_is_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run(["fleet", "--policy", str(policy(tmp_path, None, "[]"))], capsys)
    assert code == 2 and err.count("\n") == 1
    assert str(tmp_path / ".kube" / "config") in err
    assert "scope.kubernetes.kubeconfig (not set: the default)" in err


def test_no_current_context_when_none_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(KUBECONFIG.replace("current-context: dev\n", ""), encoding="utf-8")
    code, err = run(["fleet", "--policy", str(policy(tmp_path, config, "[]"))], capsys)
    assert code == 2
    assert "scope.kubernetes.contexts: none named" in err and "no current-context" in err
