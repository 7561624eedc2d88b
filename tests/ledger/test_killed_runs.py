"""What a killed run leaves (issue 28, items 1 and 2), on SQLite and PostgreSQL: only the
run that could have made an intent settles it, and a dead run is closed as ``killed``."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.instances import Action, GpuInstance
from gpuplan.ledger import PENDING, ActionRecord, Ledger
from gpuplan.ledger.killed import KILLED
from gpuplan.usecases.lifecycle.reconcile import Owner, reconcile
from tests.ledger.pgserver import PgServer

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
T1 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


def _intent(ledger: Ledger, run: int, iid: str, scope: str) -> int:
    return ledger.record_action(run, ActionRecord(
        provider="aws", region=scope.rsplit(" ", 1)[-1], instance_id=iid,
        action=Action.STOP.value, outcome=PENDING, acted_at=T0, scope=scope,
    ))  # fmt: skip


def _status(ledger: Ledger) -> dict[int, str]:
    return {r.id: r.status for r in ledger.runs()}


def test_reconcile_leaves_other_policies_and_other_scopes_to_their_owner(location: str) -> None:
    with Ledger(location) as ledger:
        theirs = ledger.start_run("stop-idle", "team-b", T0, dry_run=False)
        _intent(ledger, theirs, "i-b", "aws us-east-1")
        other_shard = ledger.start_run("stop-idle", "team-a", T0, dry_run=False)
        _intent(ledger, other_shard, "i-2", "aws us-east-2")
        gone = ledger.start_run("stop-idle", "team-a", T0, dry_run=False)
        _intent(ledger, gone, "i-1", "aws us-east-1")
        mine = ledger.start_run("stop-idle", "team-a", T1, dry_run=False)
        owner = Owner(mine, "team-a", {"aws us-east-1"})
        settled = reconcile(ledger, {}, "idle", T1, owner)
        # Only i-1 (our policy, our scope): not listed any more, so failed.
        assert [(r.instance_id, r.outcome.value) for r in settled] == [("i-1", "failed")]
        assert sorted(p.instance_id for p in ledger.pending_actions()) == ["i-2", "i-b"]
        status = _status(ledger)
        assert status[gone] == KILLED  # its last intent settled: closed
        assert status[other_shard] == "running"  # left for shard us-east-2's next run
        assert status[theirs] == "running"  # another policy's run is not ours to close
        [closed] = [r for r in ledger.runs() if r.id == gone]
        assert closed.finished_at == T1
        assert closed.summary["closed_by_run"] == mine


def test_a_whole_fleet_run_settles_every_scope_of_its_policy(location: str) -> None:
    with Ledger(location) as ledger:
        shard_run = ledger.start_run("stop-idle", "team-a", T0, dry_run=False)
        _intent(ledger, shard_run, "i-2", "aws us-east-2")
        whole = ledger.start_run("stop-idle", "team-a", T1, dry_run=False)
        owner = Owner(whole, "team-a", {"aws us-east-1", "aws us-east-2"})
        assert [r.instance_id for r in reconcile(ledger, {}, "idle", T1, owner)] == ["i-2"]
        assert _status(ledger)[shard_run] == KILLED


def test_a_run_killed_before_any_intent_is_closed_by_the_next_run(location: str) -> None:
    with Ledger(location) as ledger:
        killed = ledger.start_run("stop-idle", "team-a", T0, dry_run=False)
        done = ledger.start_run("stop-idle", "team-a", T0, dry_run=False)
        ledger.finish_run(done, T0, "ok")
        mine = ledger.start_run("stop-idle", "team-a", T1, dry_run=False)
        reconcile(ledger, {}, "idle", T1, Owner(mine, "team-a", set(), shard="0/2"))
        status = _status(ledger)
        assert (status[killed], status[done], status[mine]) == (KILLED, "ok", "running")
        [closed] = [r for r in ledger.runs() if r.id == killed]
        assert closed.summary["closed_by_shard"] == "0/2"


def test_a_run_alive_in_another_session_is_not_closed(pg: PgServer, pg_db: str) -> None:
    pg_dsn = pg.dsn(pg_db)
    lock = "stop-idle policy=team-a shard=1/2"
    with Ledger(pg_dsn) as alive, Ledger(pg_dsn) as other:
        assert alive.try_lock(lock)
        alive.lock_name = lock
        running = alive.start_run("stop-idle", "team-a", T0, dry_run=False)
        mine = other.start_run("stop-idle", "team-a", T1, dry_run=False)
        reconcile(other, {}, "idle", T1, Owner(mine, "team-a", set()))
        assert _status(other)[running] == "running"


def test_a_run_narrowed_to_some_instances_settles_only_theirs(location: str) -> None:
    with Ledger(location) as ledger:
        killed = ledger.start_run("stop-idle", "team-a", T0, dry_run=False)
        _intent(ledger, killed, "i-1", "aws us-east-1")
        _intent(ledger, killed, "i-2", "aws us-east-1")
        mine = ledger.start_run("stop-idle", "team-a", T1, dry_run=False)
        owner = Owner(mine, "team-a", {"aws us-east-1"}, only={"i-2"})
        assert [r.instance_id for r in reconcile(ledger, {}, "idle", T1, owner)] == ["i-2"]
        assert [p.instance_id for p in ledger.pending_actions()] == ["i-1"]
        assert _status(ledger)[killed] == "running"  # i-1 still waits for a full run


def test_a_scope_whose_listing_failed_settles_nothing(tmp_path: Path) -> None:
    """Shard 1's next run cannot list its scope (throttled): the killed intent is not
    recorded as failed ("no longer listed"); it waits for a run that can read the cloud."""
    from gpuplan.core.errors import GpuplanError
    from gpuplan.core.policy.models import Policy
    from gpuplan.providers.fake import FakeAdapter
    from gpuplan.usecases.lifecycle.stop_idle import run_stop_idle

    class Throttled(FakeAdapter):
        def list_instances(self) -> list[GpuInstance]:
            raise GpuplanError("Throttling: rate exceeded")

    policy = Policy.model_validate({"version": 1, "name": "team-a"})
    adapter = Throttled(Provider.AWS, scope="aws us-east-2")
    with Ledger(tmp_path / "l.db") as ledger:
        killed = ledger.start_run("stop-idle", "team-a", T0, dry_run=False)
        _intent(ledger, killed, "i-2", "aws us-east-2")
        result = run_stop_idle(policy, [adapter], apply=True, now=T1, ledger=ledger)
        assert result.reconciled == [] and result.problems
        assert [p.instance_id for p in ledger.pending_actions()] == ["i-2"]
        assert _status(ledger)[killed] == "running"
