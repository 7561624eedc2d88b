"""A test-only composite action (snapshot, then stop) on the in-memory fake, and the
child process that the kill test SIGKILLs part way through it.

``python -m tests.ledger.composite_child DB FLEET BLOCK_AT MARKER`` runs one applied
``stop-idle`` of :data:`POLICY` over the fake fleet file ``FLEET`` with
:data:`SNAPSHOT_THEN_STOP`, recording in the ledger ``DB``; when the fake is asked for
``BLOCK_AT`` (``snapshot`` or ``stop``) it writes ``MARKER`` and hangs before the call
takes effect, so the parent can kill it there.
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.actions import ACTIONS, ActionTable, Call, ProviderStep, Steps
from gpuplan.core.lifecycle.instances import Action, Capability
from gpuplan.core.policy import Policy
from gpuplan.ledger import Ledger
from gpuplan.providers.fake import FakeAdapter, load_fake_fleet_file
from gpuplan.usecases.clouds import registry as cloud_registry  # noqa: F401  (the clouds' action rows, policy sections)
from gpuplan.usecases.lifecycle.stop_idle import StopIdleResult, run_stop_idle

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
LATER = NOW + timedelta(minutes=20)
"""The next run: after the killed run's claim (15 minutes) has expired."""

SNAPSHOT_THEN_STOP: ActionTable = {
    **ACTIONS,
    Provider.AWS: {
        **ACTIONS[Provider.AWS],
        Action.STOP: Steps(
            (
                ProviderStep(Call.SNAPSHOT, "CreateSnapshots"),
                ProviderStep(Call.STOP, "StopInstances"),
            )
        ),
    },
}
"""AWS stop as two steps: snapshot the disks, then stop (the test-only composite)."""

POLICY = Policy.model_validate(
    {
        "version": 1,
        "name": "research",
        "scope": {"aws": {"regions": ["us-east-1"]}, "match_labels": {"team": "research"}},
        "idle": {"window_minutes": 30, "grace_minutes": 0},
    }
)


def instance(iid: str) -> dict[str, Any]:
    """A GPU instance for the fleet file: running since the day before, no local disks."""
    return {
        "provider": "aws", "account": "123456789012", "region": "us-east-1",
        "instance_id": iid, "instance_type": "g5.xlarge", "state": "running",
        "started_at": (NOW - timedelta(days=1)).isoformat(), "gpu": "A10G", "gpu_count": 1,
        "labels": {"team": "research"},
    }  # fmt: skip


class HangingFake(FakeAdapter):
    """The fake, hanging when asked for ``block_at`` (after recording the call)."""

    def __init__(self, *args: Any, block_at: str, marker: Path, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.block_at, self.marker = block_at, marker

    def _called(self, method: str, *args: Any) -> None:
        super()._called(method, *args)
        if method == self.block_at:
            self.marker.write_text(method, encoding="utf-8")
            time.sleep(600)


def fake(fleet: Path, cls: type[FakeAdapter] = FakeAdapter, **kwargs: Any) -> FakeAdapter:
    """The fleet file as one AWS fake that can do everything (as ``GPUPLAN_FAKE_FLEET``)."""
    instances, flat = load_fake_fleet_file(fleet)
    out = cls(Provider.AWS, instances, capabilities=tuple(Capability), **kwargs)
    out.flat_percent = dict(flat)
    return out


def run(db: str, provider: FakeAdapter, now: datetime) -> StopIdleResult:
    """One applied run of :data:`POLICY` with :data:`SNAPSHOT_THEN_STOP`."""
    with Ledger(db) as ledger:
        return run_stop_idle(
            POLICY, [provider], apply=True, now=now, ledger=ledger, actions=SNAPSHOT_THEN_STOP
        )


if __name__ == "__main__":
    db, fleet, block_at, marker = sys.argv[1:5]
    run(db, fake(Path(fleet), HangingFake, block_at=block_at, marker=Path(marker)), NOW)
