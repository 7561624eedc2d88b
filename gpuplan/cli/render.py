"""Rendering for the terminal: aligned plain-text tables, JSON and CSV.

Plain text on purpose: no colour library on the hot path, and output that survives
pipes, logs and CI consoles.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from enum import Enum
from typing import Any, TextIO

from gpuplan.core.wording import escape_control
from gpuplan.core.wording import plural as plural

Cell = str | int | float | Decimal | None


def to_jsonable(value: Any) -> Any:
    """Decimals become numbers, dates ISO strings, enums their value."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(to_jsonable(k)): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [to_jsonable(v) for v in value]
    return value


def print_json(data: Any, out: TextIO | None = None) -> None:
    stream = out or sys.stdout
    json.dump(to_jsonable(data), stream, indent=2)
    stream.write("\n")


def csv_cell(value: Any) -> Any:
    """CSV text: numbers to at most 4 decimal places without float noise, booleans
    ``true``/``false`` (as JSON writes them), None empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return f"{value.quantize(Decimal('0.0001')).normalize():f}"
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".")
    return to_jsonable(value)


def print_csv(
    columns: Sequence[str], rows: Sequence[Mapping[str, Any]], out: TextIO | None = None
) -> None:
    writer = csv.writer(out or sys.stdout, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([csv_cell(row.get(c)) for c in columns])


def format_count(value: float) -> str:
    """GPU counts: whole numbers plain, fractions to four places (1/6 -> 0.1667)."""
    return str(int(value)) if value == int(value) else f"{value:.4f}"


def format_cell(value: Cell, *, money: bool = False, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, Decimal | float) and money:
        return f"{float(value):,.{digits}f}"
    if isinstance(value, float | Decimal):
        return f"{value:,.{digits}f}"
    return str(value)


def render_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    align_right: Sequence[bool] | None = None,
) -> str:
    """An aligned table with a header rule; numeric columns right-aligned. Cells are
    escaped (:func:`escape_control`) before they are measured, so a control character in
    a name neither reaches the terminal nor breaks the alignment."""
    rows = [[escape_control(c) for c in row] for row in rows]
    right = list(align_right) if align_right else [False] * len(headers)
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.rjust(widths[i]) if right[i] else c.ljust(widths[i]) for i, c in enumerate(cells)
        ]
        return "  ".join(parts).rstrip()

    out = [line(headers), "  ".join("-" * w for w in widths)]
    out.extend(line(r) for r in rows)
    return "\n".join(out)
