"""The TUI's tables: vi/Home/End keys, columns chosen by priority for the width, sorting.

:class:`NavTable` is a ``DataTable`` with ``j``/``k``/``g``/``G`` and Home/End moving
the cursor. :func:`choose_columns` picks which columns fit a width, most important
first, and :func:`fit_text` cuts text with an ellipsis; numbers are never cut (their
columns are as wide as their widest cell, or not shown at all).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Input

CELL_PADDING = 2
"""Characters DataTable puts around each cell (one on each side)."""
UP, DOWN = "▲", "▼"
NAME_MAX = 128
"""Widest an instance name is shown when there is room (AWS allows 256 characters in a
Name tag); narrower terminals cut it with an ellipsis."""


@dataclass(frozen=True)
class Column:
    """One table column: its key, header, importance and how it may shrink."""

    key: str
    label: str
    priority: int
    """Lower shows first: the columns people came for (prices, region) before names."""
    min_width: int = 0
    """Text columns: narrowest useful width (cut with an ellipsis); 0 for numbers."""
    max_width: int = 0
    """Text columns: widest it is admitted at; 0 means as wide as its cells (numbers)."""
    stretch: int = 0
    """Text columns: widest it grows into room left once every column that fits is in
    (a long instance name in full on a wide terminal); 0 means ``max_width``."""


def choose_columns(
    columns: Sequence[Column], widths: dict[str, int], available: int
) -> dict[str, int]:
    """Columns that fit in ``available`` characters, key -> width, in table order.

    ``widths`` is each column's natural width (widest cell or header). In priority
    order, a column is admitted at its natural width (text capped at its maximum) when
    that fits, else at its minimum (text only), else left out. Room left at the end
    widens the text columns that were shrunk (up to ``stretch``), most important first.
    """
    chosen: dict[str, int] = {}
    used = 0
    by_priority = sorted(columns, key=lambda c: c.priority)
    for col in by_priority:
        natural = max(widths.get(col.key, 0), len(col.label))
        full = min(natural, col.max_width) if col.max_width else natural
        for width in (full, min(col.min_width, full) if col.min_width else None):
            if width is not None and used + width + CELL_PADDING <= available:
                chosen[col.key] = width
                used += width + CELL_PADDING
                break
    for col in by_priority:
        if col.key not in chosen or not col.min_width:
            continue
        natural = max(widths.get(col.key, 0), len(col.label))
        cap = col.stretch or col.max_width
        target = min(natural, cap) if cap else natural
        grow = min(max(0, target - chosen[col.key]), available - used)
        chosen[col.key] += grow
        used += grow
    return {c.key: chosen[c.key] for c in columns if c.key in chosen}


def fit_text(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the last one an ellipsis when cut."""
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: width - 1] + "…"


def header(label: str, sorted_here: bool, reverse: bool, width: int | None = None) -> Text:
    """A column header, with ▲ (ascending) or ▼ (descending) when the table sorts by it.

    Widths never depend on the sort (a click that widened its column moved the others,
    and the next click at the same spot sorted another column): where the arrow does not
    fit in ``width``, the sorted header is only underlined (the status line says which).
    """
    if not sorted_here:
        return Text(label)
    arrow = DOWN if reverse else UP
    if width is not None and len(label) + len(arrow) > width:
        return Text(label, style="bold underline")
    return Text(f"{label}{arrow}", style="bold")


class NavTable(DataTable[str | Text]):
    """A row-cursor table with the keys people try first: j/k, g/G, Home/End."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "cursor_down", "Down", show=False),
        Binding("k", "cursor_up", "Up", show=False),
        Binding("g,home", "first_row", "First", show=False),
        Binding("G,end", "last_row", "Last", show=False),
    ]

    DEFAULT_CSS = """
    NavTable { border-left: tall $panel; }
    NavTable:focus { border-left: tall $accent; }
    """

    def action_first_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=0)

    def action_last_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)


class FieldInput(Input):
    """An Input that runs its own editing keys (ctrl+u, ctrl+w, ...) as they arrive.

    Textual resolves a widget's bindings only after the key has bubbled back up to the
    app, by when the next keys of a burst may already have moved the focus: ``ctrl+u``
    then ``shift+tab`` then ``aws`` cleared the new field. Here the field's own editing
    bindings run in order, in the field the key was typed into.
    """

    async def _on_key(self, event: events.Key) -> None:
        bindings = self._bindings.key_to_bindings.get(event.key, [])
        own = [b for b in bindings if not b.priority]
        if own and not event.is_printable:
            event.stop()
            event.prevent_default()
            await self.run_action(own[0].action)
            return
        await super()._on_key(event)
