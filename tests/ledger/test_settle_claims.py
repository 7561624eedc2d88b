"""Claims taken to settle a killed run's intent, on SQLite and a real PostgreSQL.

:func:`~gpuplan.ledger.claims.claim_to_settle` takes the instance's claim over from the
dead run that wrote the intent at once (its claim not expired yet), refuses a live
holder (the run settling it), and takes it over from a holder that died in turn: its
run lock free (PostgreSQL; on a file, told by a caller that holds the lock beside it),
or its claim expired. A holder with no run lock (library use) is never judged dead.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gpuplan.ledger import InstanceKey, Ledger
from gpuplan.ledger.claims import claim_instance, claim_to_settle

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
KEY = InstanceKey("aws", "123456789012", "us-east-1", "i-1")
LOCK = "stop-idle policy=research shard=1/2"
ALL = "stop-idle policy=research shard=all"


def _run(ledger: Ledger, lock: str) -> int:
    ledger.lock_name = lock
    return ledger.start_run("stop-idle", "research", NOW, dry_run=False)


def _settle(ledger: Ledger, run: int, writer: int, own_lock: str, at: datetime = NOW) -> int | None:
    """The holder's run id after ``run`` tries to claim (None: ``run`` holds it)."""
    held = claim_to_settle(
        ledger, run, KEY, at, at + timedelta(minutes=15), writer=writer, own_lock=own_lock
    )
    return None if held is None else held.run_id


def test_the_dead_writers_claim_is_taken_and_a_live_settler_keeps_it(location: str) -> None:
    with Ledger(location) as ledger:
        writer, first, second = (_run(ledger, "") for _ in range(3))
        assert claim_instance(ledger, writer, KEY, NOW, NOW + timedelta(minutes=15)) is None
        later = NOW + timedelta(minutes=5)  # the writer's claim still stands
        assert _settle(ledger, first, writer, "", later) is None
        assert _settle(ledger, second, writer, "", later) == first  # one owner
        assert _settle(ledger, first, writer, "", later) is None  # its own again
        # The first settler died without a run lock to tell: its claim waits for expiry.
        assert _settle(ledger, second, writer, "", later + timedelta(minutes=16)) is None


def test_a_settler_that_died_is_taken_over_from_a_live_one_is_not(location: str) -> None:
    with Ledger(location) as ledger:
        writer = _run(ledger, "")
        settler = _run(ledger, LOCK)  # it died: nobody holds its run lock
        mine = _run(ledger, ALL)
        assert _settle(ledger, settler, writer, LOCK) is None
        if ledger.dialect == "sqlite":  # a caller without the lock file cannot tell
            assert _settle(ledger, mine, writer, "") == settler
        assert _settle(ledger, mine, writer, ALL) is None  # its lock is free: taken over
        if ledger.dialect == "postgresql":  # alive: its run lock held in another session
            with Ledger(location) as other:
                assert other.try_lock(ALL)
                assert _settle(ledger, _run(ledger, LOCK), writer, LOCK) == mine
