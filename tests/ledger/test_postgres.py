"""What only the PostgreSQL ledger does: advisory locks, live intents, secrets kept out.

Against the real server the suite starts (tests/ledger/pgserver.py). The password is
distinctive, so "it never appears" is a plain substring check over every message.
"""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import quote

import pytest

from gpuplan.core.errors import InputError
from gpuplan.ledger import PENDING, ActionRecord, Ledger, LedgerError
from gpuplan.usecases.lifecycle.session import LockBusy, lock_name, run_session
from tests.ledger.pgserver import PASSWORD, ROLE, PgServer

NOW = datetime(2026, 12, 2, 10, 15, tzinfo=UTC)


def test_column_types_are_postgres_native_and_times_sort_bytewise(pg: PgServer, pg_db: str) -> None:
    Ledger(pg.dsn(pg_db)).close()
    types = pg.admin(
        "SELECT column_name || ' ' || data_type || ' ' || coalesce(collation_name, '-')"
        " FROM information_schema.columns WHERE table_name = 'alerts_sent' ORDER BY 1",
        pg_db,
    ).splitlines()
    assert "threshold_percent double precision -" in types
    assert "sent_at text C" in types
    ids = pg.admin(
        "SELECT data_type || ' ' || is_identity FROM information_schema.columns"
        " WHERE table_name = 'runs' AND column_name = 'id'",
        pg_db,
    )
    assert ids == "bigint YES"


def test_an_intent_of_a_live_run_is_not_handed_out_for_reconciling(
    pg: PgServer, pg_db: str
) -> None:
    dsn = pg.dsn(pg_db)
    name = lock_name("team-a", None)
    with Ledger(dsn) as alive:
        assert alive.try_lock(name)
        alive.lock_name = name
        run = alive.start_run("stop-idle", "team-a", NOW, dry_run=False)
        alive.record_action(run, ActionRecord("aws", "us-east-1", "i-1", "stop", PENDING, NOW))
        assert [p.instance_id for p in alive.pending_actions()] == ["i-1"]  # its own lock
        with Ledger(dsn) as other:
            assert other.pending_actions() == []  # mid-call in another session
            assert not other.try_lock(name)
    with Ledger(dsn) as next_run:  # the run's connection is gone: its lock went with it
        assert next_run.try_lock(name)
        assert [p.instance_id for p in next_run.pending_actions()] == ["i-1"]


def test_the_run_lock_is_per_policy_and_shard(pg: PgServer, pg_db: str) -> None:
    from gpuplan.core.lifecycle.shard import Shard

    dsn = pg.dsn(pg_db)
    with run_session(dsn, 0, policy="team-a", shard=Shard(0, 2)) as held:
        second = run_session(dsn, 0.5, policy="team-a", shard=Shard(0, 2))
        with pytest.raises(LockBusy, match="shard=0/2") as busy, second:
            pass
        assert "127.0.0.1" in busy.value.message and "\n" not in busy.value.message
        with run_session(dsn, 0, policy="team-a", shard=Shard(1, 2)) as other:
            assert other.shard == "1/2"
        with run_session(dsn, 0, policy="team-b", shard=Shard(0, 2)):
            pass
        run = held.start_run("stop-idle", "team-a", NOW)
    with Ledger(dsn) as ledger:
        [record] = [r for r in ledger.runs() if r.id == run]
    assert record.shard == "0/2"


WRONG = "W:r@ng/pw%" + PASSWORD[::-1]
"""A wrong password with every character a URL treats specially."""


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("{role}:{encoded}@{host}/{db}", id="percent-encoded"),
        pytest.param("{role}@{host}/{db}?sslmode=disable&password={encoded}", id="query"),
    ],
)
def test_a_wrong_password_is_one_line_without_it(
    pg: PgServer, pg_db: str, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.delenv("PGPASSWORD", raising=False)
    dsn = "postgresql://" + url.format(
        role=ROLE, encoded=quote(WRONG, safe=""), host=f"127.0.0.1:{pg.port}", db=pg_db
    )
    with pytest.raises(LedgerError) as caught:
        Ledger(dsn)
    message = caught.value.message
    assert "password authentication failed" in message
    assert "\n" not in message
    for secret in (WRONG, quote(WRONG, safe=""), PASSWORD[::-1]):
        assert secret not in message


def test_an_unencoded_password_is_refused_before_the_driver_splits_it(pg: PgServer) -> None:
    with pytest.raises(InputError) as caught:
        Ledger(f"postgresql://{ROLE}:{WRONG}@127.0.0.1:{pg.port}/db")
    assert caught.value.exit_code == 2
    assert caught.value.message.startswith("postgresql://***: the URL has '/'")
    assert PASSWORD[::-1] not in caught.value.message and "ng/pw" not in caught.value.message


def test_a_wrong_pgpassword_is_not_repeated(
    pg: PgServer, pg_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PGPASSWORD", "env-" + PASSWORD[::-1])
    with pytest.raises(LedgerError, match="password authentication failed") as caught:
        Ledger(pg.dsn(pg_db))
    assert PASSWORD[::-1] not in caught.value.message


def test_an_unreachable_server_fails_fast_in_one_line(pg: PgServer) -> None:
    with pytest.raises(LedgerError) as caught:
        Ledger(f"postgresql://{ROLE}:{PASSWORD}@127.0.0.1:1/nowhere")
    message = caught.value.message
    assert message.startswith(f"postgresql://{ROLE}:***@127.0.0.1:1/nowhere: cannot connect")
    assert "\n" not in message and PASSWORD not in message


def test_a_malformed_url_is_bad_input_without_its_secrets() -> None:
    with pytest.raises(InputError) as caught:
        Ledger(f"postgresql://{ROLE}:{PASSWORD}%ZZ@127.0.0.1/db")
    assert caught.value.exit_code == 2
    assert PASSWORD not in caught.value.message
    with pytest.raises(InputError, match="invalid URI query parameter"):
        Ledger(f"postgresql://{ROLE}@127.0.0.1/db?badopt=1&password={PASSWORD}")


def test_a_nul_character_is_kept_as_a_replacement_not_a_failure(pg: PgServer, pg_db: str) -> None:
    with Ledger(pg.dsn(pg_db)) as ledger:
        run = ledger.start_run("stop-idle", "team-a", NOW)
        ledger.record_action(
            run, ActionRecord("aws", "us-east-1", "i-1", "stop", "failed", NOW, detail="a\x00b")
        )
        assert ledger.select("SELECT detail FROM actions") == [("a\ufffdb",)]
