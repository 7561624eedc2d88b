"""PostgreSQL URLs shown without their password (pure: gpuplan.core.urls)."""

from __future__ import annotations

import pytest

from gpuplan.core.urls import dsn_problem, dsn_secrets, is_postgres_dsn, redact_dsn, scrub

PW = "s3cr3t-Pw"


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://gpuplan@db.internal:5432/gpuplan", "postgresql://gpuplan@db.internal:5432/gpuplan"),
        (f"postgresql://gpuplan:{PW}@db/gpuplan", "postgresql://gpuplan:***@db/gpuplan"),
        (f"postgres://u:{PW}@h1:5432,h2:5433/db?sslmode=require",
         "postgres://u:***@h1:5432,h2:5433/db?sslmode=require"),
        (f"postgresql://u@h/db?sslmode=verify-full&password={PW}&Password=x",
         "postgresql://u@h/db?sslmode=verify-full&password=***&Password=***"),
        (f"postgresql://u@h/db?sslpassword={PW}", "postgresql://u@h/db?sslpassword=***"),
        (f"postgresql://u:{PW}@h/db#frag", "postgresql://u:***@h/db"),
        (f"postgresql://u:p@ss/{PW}@h/db", "postgresql://***"),
        (f"postgresql://u:{PW}@h/db\n", "<unparsable PostgreSQL URL>"),
        ("postgresql:///gpuplan?host=/var/run/postgresql", "postgresql:///gpuplan?host=/var/run/postgresql"),
    ],
)  # fmt: skip
def test_redacted_urls_keep_everything_but_the_password(dsn: str, shown: str) -> None:
    assert redact_dsn(dsn) == shown
    assert PW not in redact_dsn(dsn)


def test_secrets_are_found_raw_and_decoded_and_scrubbed() -> None:
    dsn = "postgresql://u:p%40ss%2Fword@h/db?password=other-secret"
    assert set(dsn_secrets(dsn)) == {"p%40ss%2Fword", "p@ss/word", "other-secret"}
    said = 'failed for "p@ss/word" then p%40ss%2Fword and other-secret'
    assert scrub(said, dsn_secrets(dsn)) == 'failed for "***" then *** and ***'


def test_ambiguous_urls_are_refused_and_plain_ones_are_not() -> None:
    assert dsn_problem("postgresql://u:p@ss@h/db") is not None
    assert dsn_problem("postgresql://u:p/ss@h/db") is not None
    assert dsn_problem("postgresql://u:p ss@h/db") is not None
    assert dsn_problem("postgresql://u:p%40ss@h/db?sslmode=require") is None
    assert dsn_problem("postgresql://u@h/db") is None


@pytest.mark.parametrize(
    ("text", "pg"),
    [("postgresql://h/db", True), ("POSTGRES://h/db", True), ("ledger.sqlite3", False),
     ("/var/lib/gpuplan/postgresql://x", False), ("", False), (None, False)],
)  # fmt: skip
def test_a_url_is_told_from_a_file_path(text: str | None, pg: bool) -> None:
    assert is_postgres_dsn(text) is pg


def test_the_tui_refuses_a_postgres_ledger_without_showing_its_password(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from gpuplan.cli.main import main

    assert main(["tui", "--db", f"postgresql://u:{PW}@h/db"]) == 2
    monkeypatch.setenv("GPUPLAN_DB", f"postgresql://u:{PW}@h/db")
    assert main(["tui"]) == 2
    err = capsys.readouterr().err
    assert err.count("the TUI needs a ledger file") == 2 and PW not in err
