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


_COUNTS = ("actions", "verdicts")
_SIGHTINGS = ("acted", "idle", "restarted")
_TEXT_FIELDS = ("instance_id", "region", "instance_type", "stopped_at", "action")
MAX_WINDOW_MINUTES = 366 * 24 * 60


def run_summary(cell: Any) -> dict[str, Any]:
    """A stop-idle run's summary, its known keys checked for the shape readers rely on.

    ``actions``/``verdicts``: word -> count; ``acted``/``idle``/``restarted``: lists
    of objects with text ids, a decimal ``hourly_usd``, a numeric ``gpu_count`` and
    text ``labels``; ``window_minutes`` a whole number of minutes; ``problems`` text.
    Unknown keys pass (a newer gpuplan may add some).
    """
    summary = json_object(cell, "summary")
    for key in _COUNTS:
        counts = summary.get(key, {})
        if not isinstance(counts, dict) or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in counts.values()
        ):
            raise RowError(f"summary.{key} is not a mapping of counts")
    for key in _SIGHTINGS:
        items = summary.get(key, [])
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise RowError(f"summary.{key} is not a list of objects")
        for item in items:
            _sighting(item, key)
    window = summary.get("window_minutes", 60)
    if not isinstance(window, int) or isinstance(window, bool):
        raise RowError("summary.window_minutes is not a whole number")
    if not 0 < window <= MAX_WINDOW_MINUTES:
        raise RowError("summary.window_minutes is out of range")
    problems = summary.get("problems", [])
    if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
        raise RowError("summary.problems is not a list of text")
    return summary


def _sighting(item: dict[str, Any], key: str) -> None:
    if key == "restarted" and not {"instance_id", "stopped_at"} <= item.keys():
        raise RowError("summary.restarted entry lacks instance_id or stopped_at")
    if key == "acted" and "instance_id" not in item:
        raise RowError("summary.acted entry lacks instance_id")
    for name in _TEXT_FIELDS:
        if name in item and not isinstance(item[name], str):
            raise RowError(f"summary.{key}[].{name} is not text")
    price = item.get("hourly_usd", "")
    if price not in ("", None):
        money(price, f"summary.{key}[].hourly_usd")
    count = item.get("gpu_count", 0)
    if isinstance(count, bool) or not isinstance(count, int | float) or not 0 <= count < 1e6:
        raise RowError(f"summary.{key}[].gpu_count is not a GPU count")
    labels = item.get("labels", {})
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise RowError(f"summary.{key}[].labels is not a mapping of text")
