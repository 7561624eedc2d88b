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

from gpuplan.core.wording import one_line
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


_settings = {"wide": False}
MIN_WIDTH = 40
MIN_FREE_TEXT = 24
"""A wrapped free-text last column (a reason) keeps at least this many characters."""


def set_wide(wide: bool) -> None:
    """``--wide``: every column, whatever the terminal's width (set once per run)."""
    _settings["wide"] = wide


def table_width() -> int | None:
    """Columns a table may use: None (no limit) with ``--wide`` or when stdout is not a
    terminal and ``COLUMNS`` is unset (a file or a pipe gets every column); else
    ``COLUMNS`` when it is a whole number, else the terminal's width. At least 40."""
    import os

    if _settings["wide"]:
        return None
    text = os.environ.get("COLUMNS", "").strip()
    if text.isascii() and text.isdigit() and len(text) < 6:
        return max(MIN_WIDTH, int(text))
    try:
        if sys.stdout.isatty():
            return max(MIN_WIDTH, os.get_terminal_size(sys.stdout.fileno()).columns)
    except (OSError, ValueError):
        pass
    return None


def wrap(text: str, *, indent: str = "") -> str:
    """``text`` wrapped to :func:`table_width` (unchanged when there is no limit); lines
    after the first start with ``indent``. Words are never broken (a number stays whole)."""
    import textwrap

    width = table_width()
    if width is None or len(text) <= width:
        return text
    return textwrap.fill(
        text,
        width=width,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )


def render_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    align_right: Sequence[bool] | None = None,
    drop: Sequence[int] = (),
    wrap_last: bool = False,
    numbering: int | None = None,
) -> str:
    """An aligned table with a header rule; numeric columns right-aligned. Cells are
    escaped (:func:`one_line`, newlines too) before they are measured, so a control
    character in a name neither reaches the terminal nor breaks the alignment or the lines.

    Fitting the terminal (:func:`table_width`): see :func:`shown_columns`; with
    ``wrap_last`` the last column is free text wrapped onto continuation lines. No cell
    is ever cut. A closing line names the columns left out and ``--wide``.
    """
    cells = [[one_line(c) for c in row] for row in rows]
    right = list(align_right) if align_right else [False] * len(headers)
    widths = _widths(headers, cells)
    limit = table_width()
    keep = _fit(headers, cells, widths, drop, wrap_last=wrap_last, numbering=numbering)
    last = keep[-1]
    free = widths[last]
    if wrap_last and limit is not None:
        room = max(MIN_FREE_TEXT, len(headers[last]), limit - _needed(keep[:-1], widths) - 2)
        free = min(widths[last], room)

    def lines(row: Sequence[str]) -> list[str]:
        parts = [
            row[i].rjust(widths[i]) if right[i] else row[i].ljust(widths[i]) for i in keep[:-1]
        ]
        text = row[last]
        chunks = _chunks(text, free) if wrap_last and len(text) > free else [text]
        lead = "  ".join(parts) + ("  " if parts else "")
        first = lead + (chunks[0].rjust(widths[last]) if right[last] else chunks[0])
        return [first.rstrip()] + [(" " * len(lead) + c).rstrip() for c in chunks[1:]]

    out = lines(headers)
    out.append("  ".join("-" * (free if i == last else widths[i]) for i in keep))
    for row in cells:
        out.extend(lines(row))
    left_out = [headers[i] for i in range(len(headers)) if i not in keep]
    if left_out:
        named = ", ".join(left_out)
        note = f"({plural(len(left_out), 'column')} left out to fit {limit}: {named}; "
        out.append(wrap(note + "--wide shows them)", indent=" "))
    return "\n".join(out)


def shown_columns(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    drop: Sequence[int] = (),
    wrap_last: bool = False,
    numbering: int | None = None,
) -> list[int]:
    """The columns :func:`render_table` shows (for a footer that explains only what is
    shown).

    The columns in ``drop`` are left out in that order (least important first) until the
    table fits, except one whose absence would make two rows read the same (rows must
    stay told apart; ``numbering``, a row-number column, does not count): that one stays
    and the next is tried. A table that cannot fit is printed wider."""
    cells = [[one_line(c) for c in row] for row in rows]
    widths = _widths(headers, cells)
    return _fit(headers, cells, widths, drop, wrap_last=wrap_last, numbering=numbering)


def _widths(headers: Sequence[str], cells: Sequence[Sequence[str]]) -> list[int]:
    widths = [len(h) for h in headers]
    for row in cells:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    return widths


def _fit(
    headers: Sequence[str],
    cells: Sequence[Sequence[str]],
    widths: Sequence[int],
    drop: Sequence[int],
    *,
    wrap_last: bool,
    numbering: int | None,
) -> list[int]:
    limit = table_width()
    keep = list(range(len(headers)))
    for index in drop:
        if limit is None or _needed(keep, widths, wrap_last) <= limit:
            break
        rest = [i for i in keep if i != index]
        if _distinct(cells, rest, numbering) == _distinct(cells, keep, numbering):
            keep = rest
    return keep


def _distinct(cells: Sequence[Sequence[str]], keep: Sequence[int], numbering: int | None) -> int:
    """How many rows read differently over the columns ``keep`` (a row number aside)."""
    return len({tuple(row[i] for i in keep if i != numbering) for row in cells})


def _needed(keep: Sequence[int], widths: Sequence[int], wrap_last: bool = False) -> int:
    if not keep:
        return 0
    sizes = [widths[i] for i in keep]
    if wrap_last:
        sizes[-1] = min(sizes[-1], MIN_FREE_TEXT)
    return sum(sizes) + 2 * (len(sizes) - 1)


def _chunks(text: str, width: int) -> list[str]:
    import textwrap

    # A word longer than the column (a URL) is broken rather than left to overflow.
    return textwrap.wrap(text, width=width, break_on_hyphens=False) or [""]
