"""The marks ``gpuplan schedule`` reads back from the ledger (decisions and actions)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gpuplan.core.lifecycle.schedule_plan import Event
from gpuplan.ledger.records import DecisionRecord
from gpuplan.ledger.schedule_marks import KIND, schedule_marks
from gpuplan.ledger.store import Ledger

T0 = datetime(2026, 12, 1, 20, 0, tzinfo=UTC)


def _seen(ledger: Ledger, state: str, at: datetime, *, kind: str = KIND) -> None:
    run = ledger.start_run(kind, "team", at)
    ledger.record_decision(
        run,
        DecisionRecord(
            provider="kubernetes",
            region="cluster",
            instance_id="ml/Job/train",
            instance_type="job",
            state=state,
            verdict="idle",
            reason="r",
            planned_action="none",
            decided_at=at,
        ),
    )


@pytest.mark.parametrize(
    ("state", "event"),
    [
        ("running", Event.SEEN_RUNNING),
        ("stopped", Event.SEEN_STOPPED),
        ("deallocated", Event.SEEN_STOPPED),
        ("suspended", Event.SEEN_STOPPED),
    ],
)
def test_each_state_a_schedule_run_saw_is_a_mark(tmp_path: Path, state: str, event: Event) -> None:
    with Ledger(str(tmp_path / "l.db")) as ledger:
        _seen(ledger, state, T0)
        marks, damaged = schedule_marks(ledger, "team", T0 - timedelta(days=1))
    assert damaged == []
    assert [m.event for m in marks["ml/Job/train"]] == [event]


def test_states_that_are_neither_up_nor_down_and_other_runs_leave_no_mark(tmp_path: Path) -> None:
    with Ledger(str(tmp_path / "l.db")) as ledger:
        _seen(ledger, "pending", T0)
        _seen(ledger, "suspended", T0, kind="stop-idle")
        _seen(ledger, "suspended", T0 - timedelta(days=3))
        marks, _ = schedule_marks(ledger, "team", T0 - timedelta(days=1))
    assert marks == {}
