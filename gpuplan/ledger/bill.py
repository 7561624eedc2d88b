"""The bill in the ledger: daily cost lines per cloud and scope, the estimate beside them.

``bill_lines`` holds what each cloud's cost API returned for a policy, one row per
provider, scope, day, kind, instance type, team and bill item; ``bill_estimates`` holds
gpuplan's list-price estimate for the same provider, scope, day, type and team. A sync
replaces its window (the clouds revise recent days until they are final) in one
transaction: a sync cut short leaves the previous figures whole. Money is decimal text;
nothing secret is stored (items are usage types, SKUs and meters; scopes are account,
project and subscription ids).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from gpuplan.core.audit.bill.actuals import Seen
from gpuplan.core.audit.bill.lines import CostKind, CostLine, EstimateLine
from gpuplan.core.lifecycle.instances import InstanceState
from gpuplan.ledger.claims import stamp
from gpuplan.ledger.store import Ledger

_LINE_COLUMNS = "provider, scope, day, kind, instance_type, team, item, usd, hours, final"


def replace_lines(
    ledger: Ledger, policy: str, provider: str, source: str, since: date, until: date,
    lines: Iterable[CostLine], fetched_at: datetime,
) -> int:  # fmt: skip
    """Store ``lines`` as what the cost source ``source`` (of ``provider``) billed for days
    in [since, until), replacing what it had stored there; the number of rows written. A
    source may bill several scopes (a GCP billing export: every project)."""
    written = 0
    with ledger.transaction() as db:
        db.execute(
            "DELETE FROM bill_lines WHERE policy = ? AND provider = ? AND source = ?"
            " AND day >= ? AND day < ?",
            (policy, provider, source, since.isoformat(), until.isoformat()),
        )
        for line in _merged(lines):
            db.execute(
                f"INSERT INTO bill_lines (policy, source, {_LINE_COLUMNS}, fetched_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (policy, source, line.provider, line.scope, line.day.isoformat(), line.kind.value,
                 line.instance_type, line.team, line.item, str(line.usd),
                 None if line.hours is None else str(line.hours), int(line.final),
                 stamp(fetched_at)),
            )  # fmt: skip
            written += 1
    return written


def _merged(lines: Iterable[CostLine]) -> list[CostLine]:
    """Lines with the same key summed (a cost API may page one group twice)."""
    out: dict[tuple[Any, ...], CostLine] = {}
    for line in lines:
        key = (line.provider, line.scope, line.day, line.kind, line.instance_type, line.team,
               line.item)  # fmt: skip
        old = out.get(key)
        if old is not None:
            hours = None if old.hours is None and line.hours is None else (
                (old.hours or Decimal(0)) + (line.hours or Decimal(0)))  # fmt: skip
            line = CostLine(line.provider, line.scope, line.day, line.kind, old.usd + line.usd,
                            line.instance_type, line.team, line.item, hours,
                            old.final and line.final)  # fmt: skip
        out[key] = line
    return list(out.values())


def replace_estimates(
    ledger: Ledger, policy: str, since: date, until: date, estimates: Iterable[EstimateLine],
    computed_at: datetime,
) -> int:  # fmt: skip
    """Store the estimate for days in [since, until), replacing what was there."""
    written = 0
    with ledger.transaction() as db:
        db.execute(
            "DELETE FROM bill_estimates WHERE policy = ? AND day >= ? AND day < ?",
            (policy, since.isoformat(), until.isoformat()),
        )
        for e in estimates:
            db.execute(
                "INSERT INTO bill_estimates (policy, provider, scope, day, instance_type, team,"
                " usd, hours, computed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (policy, e.provider, e.scope, e.day.isoformat(), e.instance_type, e.team,
                 str(e.usd), str(e.hours), stamp(computed_at)),
            )  # fmt: skip
            written += 1
    return written


def lines(
    ledger: Ledger, policy: str, since: date, until: date
) -> tuple[list[CostLine], list[str]]:
    """The stored bill lines of ``policy`` for days in [since, until); damaged rows named."""
    rows = ledger.select(
        f"SELECT {_LINE_COLUMNS} FROM bill_lines WHERE policy = ? AND day >= ? AND day < ?"
        " ORDER BY day, provider, scope, kind, instance_type, team, item",
        (policy, since.isoformat(), until.isoformat()),
    )
    out: list[CostLine] = []
    damaged: list[str] = []
    for r in rows:
        try:
            out.append(
                CostLine(
                    str(r[0]),
                    str(r[1]),
                    date.fromisoformat(r[2]),
                    CostKind(r[3]),
                    Decimal(r[7]),
                    str(r[4]),
                    str(r[5]),
                    str(r[6]),
                    None if r[8] is None else Decimal(r[8]),
                    bool(r[9]),
                )
            )
        except (ValueError, TypeError, InvalidOperation):
            damaged.append(f"ledger bill_lines row of {r[2]!s:.10} {r[0]!s:.20}: unreadable")
    return out, damaged


def estimates(
    ledger: Ledger, policy: str, since: date, until: date
) -> tuple[list[EstimateLine], list[str]]:
    """The stored estimate lines of ``policy`` for days in [since, until)."""
    rows = ledger.select(
        "SELECT provider, scope, day, instance_type, team, usd, hours FROM bill_estimates"
        " WHERE policy = ? AND day >= ? AND day < ? ORDER BY day, provider, instance_type",
        (policy, since.isoformat(), until.isoformat()),
    )
    out: list[EstimateLine] = []
    damaged: list[str] = []
    for r in rows:
        try:
            out.append(
                EstimateLine(
                    str(r[0]),
                    date.fromisoformat(r[2]),
                    str(r[3]),
                    Decimal(r[5]),
                    Decimal(r[6]),
                    str(r[4]),
                    str(r[1]),
                )
            )
        except (ValueError, TypeError, InvalidOperation):
            damaged.append(f"ledger bill_estimates row of {r[2]!s:.10}: unreadable")
    return out, damaged


def seen(ledger: Ledger, policy: str, since: datetime) -> tuple[list[Seen], list[str]]:
    """Every instance the policy's runs saw since ``since`` (any run kind that decides)."""
    rows = ledger.select(
        "SELECT d.provider, d.account, d.instance_id, d.instance_type, d.decided_at,"
        " r.window_minutes, d.state, d.hourly_usd, d.labels, d.id"
        " FROM decisions d JOIN runs r ON d.run_id = r.id"
        " WHERE r.policy = ? AND d.decided_at >= ? ORDER BY d.decided_at, d.id",
        (policy, since.astimezone(UTC).isoformat()),
    )
    out: list[Seen] = []
    damaged: list[str] = []
    for r in rows:
        try:
            labels = json.loads(r[8] or "{}")
            if not isinstance(labels, dict):
                raise ValueError("labels are not an object")
            out.append(
                Seen(
                    str(r[0]),
                    str(r[1] or ""),
                    str(r[2]),
                    str(r[3]),
                    datetime.fromisoformat(r[4]),
                    int(r[5]),
                    InstanceState(r[6]).bills_compute,
                    None if r[7] in (None, "") else Decimal(r[7]),
                    {str(k): str(v) for k, v in labels.items()},
                )
            )
        except (ValueError, TypeError, InvalidOperation):
            damaged.append(f"ledger decisions row {r[9]}: unreadable, left out")
    return out, damaged
