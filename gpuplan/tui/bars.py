"""Small text graphics for the TUI: a budget bar with threshold marks and a sparkline.

Pure rendering: numbers in, Rich ``Text`` out, no Textual needed (easy to test, and
the same drawing works in a snapshot and in a real terminal).
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from rich.text import Text

SPARK = "▁▂▃▄▅▆▇█"
FULL = "█"
EMPTY = "░"
MARK = "│"


def budget_bar(
    spent: Decimal, budget: Decimal, thresholds: Sequence[float], width: int = 50
) -> Text:
    """``spent`` against ``budget`` as a bar; each alert threshold is a mark on it.

    Over budget, the whole bar is red and the text says how far over.
    """
    width = max(width, 10)
    ratio = float(spent / budget) if budget > 0 else 1.0
    filled = min(width, round(ratio * width))
    marks = {min(width - 1, round(t / 100 * width)) for t in thresholds if 0 < t <= 100}
    colour = "red" if ratio >= 1 else "yellow" if _crossed(ratio, thresholds) else "green"
    bar = Text()
    for cell in range(width):
        if cell in marks:
            bar.append(MARK, style=f"bold black on {colour}" if cell < filled else "bold")
        elif cell < filled:
            bar.append(FULL, style=colour)
        else:
            bar.append(EMPTY, style="dim")
    bar.append(f" {ratio * 100:.1f}%")
    return bar


def _crossed(ratio: float, thresholds: Sequence[float]) -> bool:
    return any(ratio * 100 >= t for t in thresholds)


def sparkline(values: Sequence[float | None], top: float = 100.0, width: int | None = None) -> Text:
    """One character per value on a 0..``top`` scale; a gap (dim dot) where unknown.

    With ``width``, longer series are cut into that many buckets, each drawn at its
    highest known value (a busy moment must not vanish from the picture).
    """
    if width is not None and len(values) > width > 0:
        values = _buckets(values, width)
    out = Text()
    for value in values:
        if value is None:
            out.append("·", style="dim")
            continue
        level = max(0.0, min(1.0, value / top if top > 0 else 0.0))
        out.append(SPARK[min(len(SPARK) - 1, int(level * len(SPARK)))])
    return out


def _buckets(values: Sequence[float | None], width: int) -> list[float | None]:
    out: list[float | None] = []
    for b in range(width):
        part = values[b * len(values) // width : (b + 1) * len(values) // width]
        known = [v for v in part if v is not None]
        out.append(max(known) if known else None)
    return out
