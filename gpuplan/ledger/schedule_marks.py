"""What earlier ``gpuplan schedule`` runs of a policy recorded about each instance.

Read from the ledger's own tables (no new table): every decision of a schedule run says
the state the run saw the instance in; every action an applied schedule run carried out
says it stopped or started the instance. :func:`gpuplan.core.lifecycle.schedule_plan.decide` reads
these marks to start only what the schedule stopped itself, and to leave alone what a
person started during off-hours. A row that cannot be read is skipped and named.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from gpuplan.core.lifecycle.instances import InstanceState
from gpuplan.core.lifecycle.plan import Outcome
from gpuplan.core.lifecycle.schedule_plan import STOPPED_STATES, Event, Mark
from gpuplan.ledger.store import Ledger

KIND = "schedule"
"""The ``runs.kind`` of a ``gpuplan schedule`` run."""
_STOPS = (Outcome.STOPPED, Outcome.HIBERNATED, Outcome.SUSPENDED, Outcome.DEALLOCATED)
_SEEN_DOWN = STOPPED_STATES | {InstanceState.SUSPENDED}
"""States a run may see an instance down in: a suspended VM or Kubernetes Job counts, so a
person's resume during off-hours is told from one the schedule never saw down."""


def schedule_marks(
    ledger: Ledger, policy: str, since: datetime
) -> tuple[dict[str, list[Mark]], list[str]]:
    """Instance id -> its marks since ``since``, oldest first; and the rows left out."""
    marks: dict[str, list[Mark]] = defaultdict(list)
    damaged: list[str] = []
    seen = ledger.select(
        "SELECT r.started_at, d.instance_id, d.state, d.id FROM decisions d"
        " JOIN runs r ON d.run_id = r.id WHERE r.kind = ? AND r.policy = ? AND r.started_at >= ?",
        (KIND, policy, since.isoformat()),
    )
    for at, instance_id, state, row in seen:
        try:
            moment, known = datetime.fromisoformat(at), InstanceState(state)
        except (ValueError, TypeError):
            damaged.append(f"decisions row {row}: unreadable, left out")
            continue
        if known is InstanceState.RUNNING:
            marks[instance_id].append(Mark(moment, Event.SEEN_RUNNING))
        elif known in _SEEN_DOWN:
            marks[instance_id].append(Mark(moment, Event.SEEN_STOPPED))
    outcomes = (*(o.value for o in _STOPS), Outcome.STARTED.value)
    done = ledger.select(
        "SELECT a.acted_at, a.instance_id, a.outcome, a.id FROM actions a"
        " JOIN runs r ON a.run_id = r.id WHERE r.kind = ? AND r.policy = ? AND r.dry_run = 0"
        f" AND a.acted_at >= ? AND a.outcome IN ({', '.join('?' for _ in outcomes)})",
        (KIND, policy, since.isoformat(), *outcomes),
    )
    for at, instance_id, outcome, row in done:
        try:
            moment = datetime.fromisoformat(at)
        except (ValueError, TypeError):
            damaged.append(f"actions row {row}: unreadable, left out")
            continue
        event = Event.STARTED if outcome == Outcome.STARTED.value else Event.STOPPED
        marks[instance_id].append(Mark(moment, event))
    for found in marks.values():
        found.sort(key=lambda m: (m.at, m.event is Event.STOPPED or m.event is Event.STARTED))
    return dict(marks), damaged
