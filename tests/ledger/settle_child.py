"""Child processes for settling one killed composite action from two runs at once.

``python -m tests.ledger.settle_child kill DB FLEET DIR BLOCK_AT`` runs an applied
``stop-idle`` of :data:`~tests.ledger.composite_child.POLICY` (snapshot, then stop) at
``NOW`` over the shared fake cloud in ``DIR`` (:mod:`tests.ledger.shared_fake`) and
hangs at ``BLOCK_AT`` (writing ``DIR/hanging``) until the test SIGKILLs it:
``intent`` right after the intent and its steps are committed, ``snapshot`` inside the
snapshot call before it takes effect, ``snapshot-taken`` inside it after the cloud
made the snapshot, ``stop`` inside the stop call before it takes effect.

``python -m tests.ledger.settle_child settle DB FLEET DIR SHARDS NAME`` is one applied
run five minutes later (within the killed run's claim), unsharded for ``SHARDS`` 0,
else the shard of ``SHARDS`` that owns the fake's scope. It writes ``DIR/ready-NAME``,
waits for ``DIR/go`` (so two such runs start together) and prints its result as JSON.

On PostgreSQL each run holds its session's advisory lock (:func:`run_session`), so
the unsharded run and a shard run in parallel as in production. A ledger file's runs
take turns through the lock file beside it; here the children open the file directly
(library use), so that the claim in the ledger is what keeps them apart.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.instances import Capability, GpuInstance
from gpuplan.core.lifecycle.shard import Shard
from gpuplan.ledger import Ledger
from gpuplan.providers.fake import load_fake_fleet_file
from gpuplan.usecases.lifecycle.journal import Journal
from gpuplan.usecases.lifecycle.session import run_session
from gpuplan.usecases.lifecycle.stop_idle import StopIdleResult, run_stop_idle
from tests.ledger.composite_child import NOW, POLICY, SNAPSHOT_THEN_STOP
from tests.ledger.shared_fake import SharedFake

SETTLE_AT = NOW + timedelta(minutes=5)
"""The settling runs: while the killed run's claim (15 minutes) still stands."""
DELAY_S = 0.2
"""Each cloud call's round trip: long enough that two settling runs overlap."""


class HangingShared(SharedFake):
    """The shared fake, hanging (until killed) at ``block_at``."""

    def __init__(self, *args: Any, block_at: str, marker: Path, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.block_at, self.marker = block_at, marker

    def hang(self) -> None:
        self.marker.write_text(self.block_at, encoding="utf-8")
        time.sleep(600)

    def _called(self, method: str, *args: Any) -> None:
        super()._called(method, *args)
        if method == self.block_at:
            self.hang()

    def snapshot(self, instance: GpuInstance, label: str) -> str:
        made = super().snapshot(instance, label)
        if self.block_at == "snapshot-taken":  # the cloud made it; its id never came back
            self.hang()
        return made


def shared(fleet: Path, folder: Path, cls: type[SharedFake] = SharedFake, **kw: Any) -> SharedFake:
    instances, flat = load_fake_fleet_file(fleet)
    out = cls(
        Provider.AWS,
        instances,
        capabilities=tuple(Capability),
        state=folder / "state.json",
        log=folder / "calls.log",
        delay_s=DELAY_S,
        **kw,
    )
    out.flat_percent = dict(flat)
    return out


@contextmanager
def ledger_for(db: str, shard: Shard | None) -> Iterator[Ledger]:
    if db.startswith("postgresql://"):
        with run_session(db, 60, policy=POLICY.name, shard=shard) as ledger:
            yield ledger
    else:
        with Ledger(db) as ledger:
            yield ledger


def run(db: str, provider: SharedFake, now: datetime, shard: Shard | None) -> StopIdleResult:
    with ledger_for(db, shard) as ledger:
        return run_stop_idle(
            POLICY, [provider], apply=True, now=now, ledger=ledger, actions=SNAPSHOT_THEN_STOP
        )


def kill(db: str, fleet: Path, folder: Path, block_at: str) -> None:
    marker = folder / "hanging"
    if block_at == "intent":  # hang once the intent and its steps are committed
        written = Journal.intent_steps

        def hang_after(self: Journal, *args: Any, **kwargs: Any) -> Any:
            out = written(self, *args, **kwargs)
            marker.write_text(block_at, encoding="utf-8")
            time.sleep(600)
            return out

        Journal.intent_steps = hang_after  # type: ignore[method-assign]
    provider = shared(fleet, folder, HangingShared, block_at=block_at, marker=marker)
    run(db, provider, NOW, None)


def settle(db: str, fleet: Path, folder: Path, shards: int, name: str) -> None:
    provider = shared(fleet, folder)
    shard = None
    if shards:
        shard = next(s for i in range(shards) if (s := Shard(i, shards)).owns(provider.scope))
    (folder / f"ready-{name}").write_text(name, encoding="utf-8")
    deadline = time.monotonic() + 60
    while not (folder / "go").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    result = run(db, provider, SETTLE_AT, shard)
    body = {
        "shard": shard.label if shard else None,
        "failed": result.failed,
        "problems": result.problems,
        "reconciled": [
            {"instance_id": r.instance_id, "outcome": r.outcome.value, "detail": r.detail}
            for r in result.reconciled
        ],
        "outcomes": [
            {
                "instance_id": o.item.instance.instance_id,
                "outcome": o.outcome.value,
                "detail": o.detail,
            }
            for o in result.outcomes
        ],
    }
    print(json.dumps(body))


if __name__ == "__main__":
    mode, db, fleet, folder = sys.argv[1:5]
    if mode == "kill":
        kill(db, Path(fleet), Path(folder), sys.argv[5])
    else:
        settle(db, Path(fleet), Path(folder), int(sys.argv[5]), sys.argv[6])
