"""A wall-time vs cost scatter chart with the Pareto frontier highlighted.

Drawn from text cells (no plotting library, works offline and in any terminal). Axes
switch to a log scale when values span more than a factor of 20, as planner options
do (two hours on 512 GPUs against three months on one). Which options are on the
frontier comes from the planner; this module only places and paints them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.reactive import reactive
from textual.widget import Widget

FRONTIER = "●"
OTHER = "·"
SELECTED = "◆"
LOG_SPAN = 20.0
Y_LABEL = 9


@dataclass(frozen=True)
class ChartPoint:
    hours: float
    cost_usd: float
    frontier: bool


@dataclass(frozen=True)
class _Axis:
    low: float
    high: float
    log: bool

    @classmethod
    def fit(cls, values: Sequence[float]) -> _Axis:
        low, high = min(values), max(values)
        log = low > 0 and high / low > LOG_SPAN
        if high == low:
            low, high = low * 0.9, high * 1.1 + 1e-9
        return cls(low, high, log)

    def position(self, value: float, cells: int) -> int:
        if self.log:
            span = math.log(self.high) - math.log(self.low)
            share = (math.log(value) - math.log(self.low)) / span
        else:
            share = (value - self.low) / (self.high - self.low)
        return max(0, min(cells - 1, round(share * (cells - 1))))


def short_money(value: float) -> str:
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"${value / limit:.3g}{suffix}"
    return f"${value:.3g}"


def short_hours(value: float) -> str:
    if value >= 48:
        return f"{value / 24:.3g} d"
    return f"{value:.3g} h"


def render_chart(
    points: Sequence[ChartPoint], width: int, height: int, selected: int | None = None
) -> Text:
    """The chart as ``height`` lines of ``width`` cells (cost up, wall time right)."""
    if not points or width < Y_LABEL + 10 or height < 5:
        return Text("no priced options to chart", style="dim")
    plot_w, plot_h = width - Y_LABEL - 1, height - 3
    x = _Axis.fit([p.hours for p in points])
    y = _Axis.fit([p.cost_usd for p in points])
    grid: list[list[tuple[str, str]]] = [[(" ", "")] * plot_w for _ in range(plot_h)]
    # Paint the others first so a frontier point or the selection wins a shared cell.
    order = sorted(range(len(points)), key=lambda i: (i == selected, points[i].frontier))
    for i in order:
        point = points[i]
        col = x.position(point.hours, plot_w)
        row = plot_h - 1 - y.position(point.cost_usd, plot_h)
        if i == selected:
            grid[row][col] = (SELECTED, "bold reverse yellow")
        elif point.frontier:
            grid[row][col] = (FRONTIER, "bold green")
        else:
            grid[row][col] = (OTHER, "dim")
    out = Text(no_wrap=True, overflow="crop")
    scales = " · log scales" if x.log or y.log else ""
    out.append(f"{'cost':>{Y_LABEL}} ", style="bold")
    out.append(f"{FRONTIER} Pareto frontier {OTHER} other {SELECTED} selected{scales}\n")
    for r, cells in enumerate(grid):
        label = short_money(y.high) if r == 0 else short_money(y.low) if r == plot_h - 1 else ""
        out.append(f"{label:>{Y_LABEL}}│", style="dim")
        for char, style in cells:
            out.append(char, style=style)
        out.append("\n")
    out.append(" " * Y_LABEL + "└" + "─" * plot_w + "\n", style="dim")
    low, high = short_hours(x.low), short_hours(x.high)
    gap = max(1, plot_w - len(low) - len(high) - len("wall time") - 2)
    left, right = gap // 2, gap - gap // 2
    out.append(
        " " * (Y_LABEL + 1) + low + " " * left + " wall time " + " " * right + high, style="dim"
    )
    return out


class TimeCostChart(Widget):
    """The chart as a widget; set ``points`` and ``selected`` to redraw."""

    DEFAULT_CSS = "TimeCostChart { height: 14; }"

    points: reactive[tuple[ChartPoint, ...]] = reactive(())
    selected: reactive[int | None] = reactive(None)
    empty: reactive[Text | None] = reactive(None)
    """Shown instead of an empty chart (why nothing was feasible); None: the default."""

    def render(self) -> Text:
        if not self.points and self.empty is not None:
            return self.empty
        return render_chart(self.points, self.size.width, self.size.height, self.selected)
