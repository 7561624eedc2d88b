"""The time-vs-cost chart: placement, frontier highlighting, selection, log scales."""

from __future__ import annotations

import pytest

from gpuplan.tui.bars import budget_bar, sparkline
from gpuplan.tui.chart import FRONTIER, OTHER, SELECTED, ChartPoint, render_chart, short_money

POINTS = [
    ChartPoint(hours=10, cost_usd=900, frontier=True),  # fast, dear
    ChartPoint(hours=100, cost_usd=100, frontier=True),  # slow, cheap
    ChartPoint(hours=100, cost_usd=900, frontier=False),  # slow and dear
]


def plot_rows(text: str) -> list[str]:
    """The plot area's rows, without the y labels."""
    return [line.split("│", 1)[1] for line in text.splitlines()[1:-2]]


def test_points_land_in_their_corners() -> None:
    rows = plot_rows(render_chart(POINTS, width=40, height=10).plain)
    assert rows[0][0] == FRONTIER  # fastest and dearest: top left
    assert rows[-1][-1] == FRONTIER  # slowest and cheapest: bottom right
    assert rows[0][-1] == OTHER  # dominated: top right
    assert sum(row.count(FRONTIER) for row in rows) == 2


def test_selection_wins_its_cell_and_is_styled() -> None:
    chart = render_chart(POINTS, width=40, height=10, selected=2)
    rows = plot_rows(chart.plain)
    assert rows[0][-1] == SELECTED
    assert OTHER not in "".join(rows)
    styles = {str(span.style) for span in chart.spans}
    assert "bold green" in styles and "bold reverse yellow" in styles


def test_log_scale_when_values_span_widely() -> None:
    wide = [ChartPoint(1, 10, True), ChartPoint(1000, 100_000, False)]
    assert "log scales" in render_chart(wide, 40, 10).plain
    assert "log scales" not in render_chart(POINTS[:2], 40, 10).plain


def test_too_small_or_empty_says_so() -> None:
    assert render_chart([], 40, 10).plain == "no priced options to chart"
    assert render_chart(POINTS, 12, 3).plain == "no priced options to chart"


@pytest.mark.parametrize(
    ("value", "text"), [(950, "$950"), (3590, "$3.59k"), (185e6, "$185M"), (2e9, "$2B")]
)
def test_short_money(value: float, text: str) -> None:
    assert short_money(value) == text


def test_budget_bar_marks_thresholds_and_turns_red_over_budget() -> None:
    from decimal import Decimal

    bar = budget_bar(Decimal(500), Decimal(1000), [50, 80, 100], width=20)
    assert bar.plain.endswith(" 50.0%")
    assert bar.plain[:20] == "█" * 10 + "│░░░░░│░░│"  # marks at 50%, 80% and 100%
    over = budget_bar(Decimal(1500), Decimal(1000), [50], width=20)
    assert over.plain.endswith("150.0%")
    assert any("red" in str(span.style) for span in over.spans)


def test_sparkline_levels_and_gaps() -> None:
    assert sparkline([0, 50, 100, None]).plain == "▁▅█·"


def test_sparkline_buckets_keep_the_busiest_moment() -> None:
    series: list[float | None] = [0.0] * 48
    series[7] = 100.0
    series[40:] = [None] * 8
    line = sparkline(series, width=24).plain
    assert len(line) == 24
    assert line[3] == "█" and line.count("█") == 1
    assert line.endswith("····")
