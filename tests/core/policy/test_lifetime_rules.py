"""``policy check`` on lifetimes, exemptions and owners: each problem one line naming the
file, line and key; exit 2; a consistent file passes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gpuplan.cli.main import main

HEAD = "version: 1\nname: t\nscope:\n  aws: {regions: [us-east-1]}\n"


def check(
    write: Callable[[str, str], Path], body: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    path = write(HEAD + body, "p.yaml")
    code = main(["policy", "check", str(path)])
    return code, capsys.readouterr().err


def test_stopped_for_needs_allow_data_loss(
    write_policy: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = check(
        write_policy, "idle: {allow_data_loss: false}\nlifetimes:\n  stopped_for_days: 30\n", capsys
    )
    assert code == 2
    assert "p.yaml:7:" in err and "lifetimes.stopped_for_days: stopped_for snapshots" in err


def test_secret_names_must_be_gpuplan_or_allowed(
    write_policy: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    body = (
        "idle: {allow_data_loss: false}\n"
        "owners:\n  destinations:\n    ml: {slack_env: SLACK_URL}\n"
        "    ops: {webhook_env: GPUPLAN_OPS}\n"
    )
    code, err = check(write_policy, body, capsys)
    assert code == 2
    assert "owners.destinations.ml.slack_env: SLACK_URL may not be read" in err
    assert "GPUPLAN_OPS" not in err
    code, _ = check(write_policy, body + "env_allow: [SLACK_URL]\n", capsys)
    assert code == 0


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("owners:\n  destinations:\n    ml: {email: [a@example.org]}\n", "set owners.smtp"),
        ("owners:\n  destinations:\n    ml: {}\n", "needs webhook_env, slack_env or email"),
        ("owners:\n  destinations:\n    ml: {email: [not-an-address]}\n", "an email address"),
        (
            "owners:\n  smtp: {host: 127.0.0.1, tls: none, sender: g@example.org}\n",
            "owners.smtp.tls: tls: none sends mail",
        ),
        (
            "owners:\n  smtp: {host: mail.example.org, port: 70000, sender: g@example.org}\n",
            "owners.smtp.port: input should be less than or equal to 65535",
        ),
        ("exemptions: {max_days: 0}\n", "exemptions.max_days: must be at least 1"),
        ("lifetimes: {max_runtime: 3 days}\n", "lifetimes.max_runtime"),
    ],
)
def test_bad_values_are_one_line_each(
    body: str,
    expected: str,
    write_policy: Callable[[str, str], Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, err = check(write_policy, "idle: {allow_data_loss: false}\n" + body, capsys)
    assert code == 2, err
    assert expected in err
    assert "Traceback" not in err
