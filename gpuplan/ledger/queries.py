"""Typed reads of the ledger's own tables for savings, waste and history (not the run
summaries, which an interrupted run never writes).

``acted``: the actions that applied runs carried out (joined with the decision that
led to each, for its price and labels). ``sightings``: every decision of every run
(verdict, state, labels, price, GPUs), with its run's start and idle window. A row
whose stored values cannot be read (a bad date, labels that are not JSON) is skipped
and reported in the returned ``damaged`` list, never fatal.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from gpuplan.core.audit.savings import Acted, Sighting
from gpuplan.core.lifecycle.idle import IdleVerdict
from gpuplan.core.lifecycle.instances import InstanceState
from gpuplan.core.lifecycle.plan import DONE
from gpuplan.ledger.store import Ledger

_DONE = tuple(o.value for o in DONE.values())


def _where(kind: str, since: datetime | None, policy: str | None) -> tuple[str, list[Any]]:
    sql, params = " WHERE r.kind = ?", [kind]
    if since is not None:
        sql += " AND r.started_at >= ?"
        params.append(since.isoformat())
    if policy is not None:
        sql += " AND r.policy = ?"
        params.append(policy)
    return sql, params


def acted(
    ledger: Ledger,
    *,
    kind: str = "stop-idle",
    since: datetime | None = None,
    policy: str | None = None,
) -> tuple[list[Acted], list[str]]:
    where, params = _where(kind, since, policy)
    marks = ", ".join("?" for _ in _DONE)
    rows = ledger.select(
        "SELECT r.started_at, a.instance_id, a.region, d.instance_type, d.hourly_usd, d.labels,"
        " a.id, d.account FROM actions a JOIN runs r ON a.run_id = r.id"
        " LEFT JOIN decisions d ON a.decision_id = d.id"
        f"{where} AND r.dry_run = 0 AND a.outcome IN ({marks}) ORDER BY r.started_at, a.id",
        (*params, *_DONE),
    )
    out: list[Acted] = []
    damaged: list[str] = []
    for row in rows:
        try:
            out.append(
                Acted(
                    datetime.fromisoformat(row[0]),
                    row[1],
                    row[2],
                    row[3] or "",
                    _money(row[4]),
                    _labels(row[5]),
                    row[7] or "",
                )
            )
        except (ValueError, TypeError, InvalidOperation):
            damaged.append(f"actions row {row[6]}: unreadable, left out")
    return out, damaged


def sightings(
    ledger: Ledger,
    *,
    kind: str = "stop-idle",
    since: datetime | None = None,
    policy: str | None = None,
) -> tuple[list[Sighting], list[str]]:
    where, params = _where(kind, since, policy)
    rows = ledger.select(
        "SELECT r.started_at, r.window_minutes, d.instance_id, d.verdict, d.state, d.labels,"
        " d.hourly_usd, d.gpu_count, d.id, d.account"
        " FROM decisions d JOIN runs r ON d.run_id = r.id"
        f"{where} ORDER BY r.started_at, d.id",
        tuple(params),
    )
    out: list[Sighting] = []
    damaged: list[str] = []
    for row in rows:
        try:
            out.append(_sighting(row))
        except (ValueError, TypeError, InvalidOperation):
            damaged.append(f"decisions row {row[8]}: unreadable, left out")
    return out, damaged


def _sighting(row: Sequence[Any]) -> Sighting:
    return Sighting(
        datetime.fromisoformat(row[0]),
        int(row[1]),
        row[2],
        IdleVerdict(row[3]),
        InstanceState(row[4]),
        _labels(row[5]),
        _money(row[6]),
        float(row[7]),
        row[9] or "",
    )


def _money(text: str | None) -> Decimal | None:
    return None if text in (None, "") else Decimal(text)


def _labels(text: str | None) -> dict[str, str]:
    raw = json.loads(text or "{}")
    if not isinstance(raw, dict):
        raise ValueError("labels are not an object")
    return {str(k): str(v) for k, v in raw.items()}


@dataclass
class RunTally:
    """What one run decided and did, counted from its decision and action rows."""

    verdicts: dict[str, int] = field(default_factory=dict)
    outcomes: dict[str, int] = field(default_factory=dict)
    """Action rows by outcome (``pending`` when the run died between intent and answer)."""
    acted: list[dict[str, str]] = field(default_factory=list)
    """Instances stopped, terminated... by this run: id, region, type, outcome."""


def run_tallies(ledger: Ledger, run_ids: Sequence[int]) -> dict[int, RunTally]:
    """:class:`RunTally` per run id (runs without rows get an empty tally)."""
    out = {run_id: RunTally() for run_id in run_ids}
    if not run_ids:
        return out
    marks = ", ".join("?" for _ in run_ids)
    for run_id, verdict, n in ledger.select(
        f"SELECT run_id, verdict, COUNT(*) FROM decisions WHERE run_id IN ({marks})"
        " GROUP BY run_id, verdict ORDER BY run_id, verdict",
        tuple(run_ids),
    ):
        out[int(run_id)].verdicts[str(verdict)] = int(n)
    for run_id, outcome, n in ledger.select(
        f"SELECT run_id, outcome, COUNT(*) FROM actions WHERE run_id IN ({marks})"
        " GROUP BY run_id, outcome ORDER BY run_id, outcome",
        tuple(run_ids),
    ):
        out[int(run_id)].outcomes[str(outcome)] = int(n)
    done = ", ".join("?" for _ in _DONE)
    for run_id, instance_id, region, instance_type, outcome in ledger.select(
        "SELECT a.run_id, a.instance_id, a.region, d.instance_type, a.outcome FROM actions a"
        " LEFT JOIN decisions d ON a.decision_id = d.id"
        f" WHERE a.run_id IN ({marks}) AND a.outcome IN ({done}) ORDER BY a.run_id, a.id",
        (*run_ids, *_DONE),
    ):
        out[int(run_id)].acted.append(
            {
                "instance_id": str(instance_id),
                "region": str(region),
                "instance_type": str(instance_type or ""),
                "action": str(outcome),
            }
        )
    return out
