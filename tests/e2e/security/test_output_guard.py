"""Every output path is guarded: secrets in the command line never come back (argparse's
own errors included) and control characters from input reach no terminal raw."""

from __future__ import annotations

import contextlib
import io
import sys

import pytest

from gpuplan.cli.main import main
from gpuplan.cli.output import SafeStream
from gpuplan.core.wording import escape_control, redact_secrets

SECRET = "S3cr3tPW"
DSN = f"postgresql://user:{SECRET}@db.example.com/ledger"


@pytest.mark.parametrize(
    "argv",
    [
        ["fleet", "--dbx", DSN],  # a mistyped flag next to the URL
        ["fleet", "--db", DSN, "--bogus"],
        ["history", "--db", DSN, "extra"],
        ["history", "--db", f"host=db password={SECRET} dbname=x", "--bad"],
        ["history", "--limit", DSN],
        ["fleet", "--concurrency", DSN],
        ["fleetx", "--db", DSN],
        ["estimate", "--params", f"https://h.example.com/x?token={SECRET}"],
        ["stop-idle", "--db", DSN, "--policy"],
        ["snooze", f"--db={DSN}", "--for"],
    ],
)
def test_argument_errors_never_echo_a_password(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    assert code == 2, err
    assert SECRET not in out + err
    assert "***" in err or "password" not in err


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("--dbx postgresql://u:pw1@h/db", "--dbx postgresql://u:***@h/db"),
        ("postgres://u:p@ss@h/db", "postgres://u:***@h/db"),
        ("host=h password=abc dbname=d", "host=h password=*** dbname=d"),
        ("password='a b c' x", "password=*** x"),
        (
            "https://h/p?token=abc&a=1&X-Amz-Signature=f00",
            "https://h/p?token=***&a=1&X-Amz-Signature=***",
        ),
        ("PGPASSWORD=hunter22", "PGPASSWORD=***"),
        ("client_secret=xyz", "client_secret=***"),
        ("user@host.example.com", "user@host.example.com"),
        ("--top: expected a whole number", "--top: expected a whole number"),
    ],
)
def test_redaction(text: str, shown: str) -> None:
    assert redact_secrets(text) == shown


def test_control_characters_are_escaped_newline_and_tab_kept() -> None:
    assert escape_control("a\x1b[2Jb\x07\x9b\u202e\n\tc") == "a\\x1b[2Jb\\x07\\x9b\\u202e\n\tc"


def test_a_secret_split_over_writes_of_one_line_is_still_redacted() -> None:
    target = io.StringIO()
    stream = SafeStream(target)
    for part in ("error: postgresql://u:", "pass", "word@h/db\n"):
        stream.write(part)
    assert target.getvalue() == "error: postgresql://u:***@h/db\n"


def test_known_secret_values_are_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "plainvaluewithoutshape")
    from gpuplan.cli.output import guarded_output

    target = io.StringIO()
    monkeypatch.setattr(sys, "stderr", target)
    with guarded_output([]):
        print("boom plainvaluewithoutshape", file=sys.stderr)
    assert target.getvalue() == "boom ***\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["estimate", "--params", "7B", "--tokens", "1T", "--region", "\x1b[2J"],
        ["estimate", "--params", "7B", "--tokens", "1T", "--gpu", "\x1b]0;pwn\x07"],
        ["catalog", "--region", "\x1b[31mred"],
        ["catalog", "--provider", "aws\x1b[2J"],
        ["gpus", "--gpu", "\x1b[2J"],
        ["estimate", "--params", "\x1b[2J7B", "--tokens", "1T"],
        ["history", "--limit", "\x1b[2J"],
        ["fleet", "--policy", "/no/such/\x1b[2J.yaml"],
        ["policy", "check", "/no/such/\x1b[2J.yaml"],
        ["snooze", "i-\x1b[2J", "--for", "1h"],
        ["estimate", "--job", "/no/\x1b[2J"],
    ],
)
def test_control_characters_from_input_never_reach_the_terminal(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with contextlib.suppress(SystemExit):
        main(argv)
    out, err = capsys.readouterr()
    assert "\x1b" not in out + err and "\x07" not in out + err


@pytest.mark.parametrize("name", ["LAMBDA_API_KEY", "RUNPOD_API_KEY", "VAST_API_KEY"])
def test_a_gpu_clouds_price_api_key_is_never_printed(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The key ``catalog refresh`` reads for a GPU cloud's price API is a secret like a
    cloud credential: pasted where a value goes, it comes back as ``***``."""
    key = "secret_6f1c9e2a7b"
    monkeypatch.setenv(name, key)
    code = main(["estimate", "--params", key])
    out, err = capsys.readouterr()
    assert code == 2 and key not in out + err and "***" in err, err
