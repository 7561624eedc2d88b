"""Tolerant decoding of ledger rows: a damaged row is reported, never fatal.

A ledger lives for years and is written by several gpuplan versions, and a disk or a
hand edit can damage it. Reading commands (``history``, ``savings``, ``fleet
--report``, ``budget``) decode each row here: a row whose dates are not ISO times, whose
money is not a decimal or whose JSON is not an object becomes a :class:`DamagedRow`
(table, row id, what is wrong), the caller skips it and prints one notice per row.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class DamagedRow:
    """One ledger row that could not be read."""

    table: str
    row_id: object
    reason: str

    def __str__(self) -> str:
        return f"ledger {self.table} row {self.row_id} skipped: {self.reason}"


class RowError(ValueError):
    """A cell that does not hold what its column promises."""


def when(cell: Any, column: str) -> datetime:
    """An ISO time cell as an aware datetime (a naive one is taken as UTC)."""
    if not isinstance(cell, str):
        raise RowError(f"{column} is not a time ({type(cell).__name__})")
    try:
        value = datetime.fromisoformat(cell)
    except ValueError:
        raise RowError(f"{column} is not an ISO time ({cell[:40]!r})") from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def maybe_when(cell: Any, column: str) -> datetime | None:
    return None if cell is None else when(cell, column)


def money(cell: Any, column: str) -> Decimal:
    """A decimal text cell as a finite Decimal."""
    try:
        value = Decimal(str(cell))
    except (InvalidOperation, ValueError):
        raise RowError(f"{column} is not an amount ({str(cell)[:40]!r})") from None
    if not value.is_finite():
        raise RowError(f"{column} is not a finite amount")
    return value


def maybe_money(cell: Any, column: str) -> Decimal | None:
    return None if cell is None else money(cell, column)


def json_object(cell: Any, column: str) -> dict[str, Any]:
    """A JSON text cell that must hold an object (NULL or empty text: an empty one)."""
    if cell is None or cell == "":
        return {}
    try:
        value = json.loads(cell)
    except (TypeError, ValueError, RecursionError):
        raise RowError(f"{column} is not JSON") from None
    if not isinstance(value, dict):
        raise RowError(f"{column} is JSON but not an object")
    return value


def decode_rows(
    table: str, rows: Iterable[Sequence[Any]], decode: Any
) -> tuple[list[T], list[DamagedRow]]:
    """``decode(row)`` for each row (its id first); damaged rows collected, not raised."""
    good: list[T] = []
    damaged: list[DamagedRow] = []
    for row in rows:
        try:
            good.append(decode(row))
        except (RowError, TypeError, ValueError, IndexError) as exc:
            damaged.append(DamagedRow(table, row[0] if row else "?", str(exc)))
    return good, damaged
