"""The Estimate screen: run the planner from the form, select a row, read its arithmetic."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static, TabbedContent

from gpuplan.tui import format as fmt
from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.chart import TimeCostChart
from gpuplan.tui.context import TuiContext
from gpuplan.tui.estimate import EstimateScreen
from tests.tui.conftest import drive


def shown(app: GpuplanApp, widget_id: str) -> str:
    return str(app.screen.query_one(widget_id, Static).render())


async def run_estimate(app: GpuplanApp, pilot: Pilot[None]) -> None:
    await pilot.press("enter")
    await app.workers.wait_for_complete()
    await pilot.pause()


def test_run_an_estimate_and_select_a_row(tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context)

    async def script(pilot: Pilot[None]) -> None:
        await pilot.press("2")
        assert isinstance(app.screen, EstimateScreen)
        assert app.focused is app.screen.query_one("#params", Input)  # 7B, 140B prefilled
        await run_estimate(app, pilot)
        screen = app.screen
        assert isinstance(screen, EstimateScreen) and screen.result is not None
        table = screen.query_one("#options", DataTable)
        assert table.row_count == len(screen.result.options) > 1
        assert table.has_focus
        assert "feasible options" in shown(app, "#status")
        stars = [str(c).strip() for c in table.get_column("mark")]
        assert stars.count("★") == sum(o.pareto for o in screen.result.options) >= 1
        # Rank by cost: the cost column never goes down.
        costs = [o.cost_usd for o in screen.result.options if o.cost_usd is not None]
        assert costs == sorted(costs)

        await pilot.press("down")
        second = screen.result.options[1]
        explain = shown(app, "#explain")
        assert explain.startswith(f"{fmt.count(second.gpus)}x {second.gpu}")
        assert "FLOPs dense = 6 x 7e+09 params x 1.4e+11 tokens" in explain
        assert "memory per GPU (GiB)" in explain
        assert screen.query_one("#chart", TimeCostChart).selected == screen.point_of[1]

        assert screen.query_one("#panes", TabbedContent).active == "chart-pane"
        await pilot.press("enter")
        assert screen.query_one("#panes", TabbedContent).active == "explain-pane"
        await pilot.press("t")
        assert screen.query_one("#panes", TabbedContent).active == "chart-pane"

    drive(app, script)


def test_bad_input_is_an_error_line(tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        app.screen.query_one("#params", Input).value = "seven"
        await run_estimate(app, pilot)
        status = app.screen.query_one("#status", Static)
        assert "params: expected a number" in str(status.render())
        assert "--params" not in str(status.render())
        assert app.screen.query_one("#params", Input).has_class("bad")
        assert status.has_class("error")
        assert app.screen.query_one("#options", DataTable).row_count == 0

    drive(app, script)


def test_nothing_feasible_says_why(tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        app.screen.query_one("#deadline", Input).value = "1h"
        app.screen.query_one("#gpus", Input).value = "8"
        await run_estimate(app, pilot)
        assert "0 feasible options" in shown(app, "#status")
        explain = shown(app, "#explain")
        assert explain.startswith("No feasible option.")
        assert "deadline" in explain

    drive(app, script)


def test_policy_field_leaves_out_what_the_policy_forbids(
    tui_context: TuiContext, tmp_path: Path
) -> None:
    policy = tmp_path / "only-a10g.yaml"
    policy.write_text(
        "version: 1\nname: small-team\nscope: {}\nplanning:\n  allowed_gpus: [A10G]\n",
        encoding="utf-8",
    )
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        app.screen.query_one("#policy", Input).value = str(policy)
        await run_estimate(app, pilot)
        screen = app.screen
        assert isinstance(screen, EstimateScreen) and screen.result is not None
        assert {o.gpu for o in screen.result.options} <= {"A10G"}
        reasons = [r for o in screen.result.infeasible for r in o.reasons]
        assert any(r.startswith("policy small-team") and "not allowed" in r for r in reasons)

    drive(app, script)


def test_at_80x24_the_results_show_cost_range_region_and_pricing(
    tui_context: TuiContext,
) -> None:
    """The form makes room when results come; ``f`` brings it back with the focus."""
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        screen = app.screen
        form = screen.query_one("#form")
        assert form.display
        await run_estimate(app, pilot)
        table = screen.query_one("#options", DataTable)
        keys = [str(k.value) for k in table.columns]
        assert {"cost", "hours_range", "region", "pricing"} <= set(keys), keys
        assert not form.display and table.has_focus
        await pilot.press("f")
        assert form.display
        assert app.focused is screen.query_one("#params", Input)
        assert "pricing" not in [str(k.value) for k in table.columns]  # 80 columns: too narrow
        await pilot.press("tab")  # typing works again in the form
        await pilot.press("f")  # a letter typed in a field is text, not the binding
        assert form.display

    drive(app, script, size=(80, 24))


def test_click_a_header_to_sort_the_options(tui_context: TuiContext) -> None:
    """Cost ascending, then descending at the same spot; Explain follows the row."""
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        await run_estimate(app, pilot)
        screen = app.screen
        assert isinstance(screen, EstimateScreen) and screen.result is not None
        table = screen.query_one("#options", DataTable)
        columns = table.ordered_columns
        index = next(i for i, c in enumerate(columns) if c.key.value == "hours")
        x = sum(c.get_render_width(table) for c in columns[:index]) + 2
        widths = [c.get_render_width(table) for c in columns]
        for descending in (False, True):
            assert await pilot.click("#options", offset=(x, 0))
            await pilot.pause()
            ranks = [int(str(k.value)) for k in table.rows]
            hours = [screen.result.options[r].hours or 0.0 for r in ranks]
            assert hours == sorted(hours, reverse=descending)
            assert [c.get_render_width(table) for c in table.ordered_columns] == widths
        await pilot.press("G")
        last = screen.result.options[int(str(list(table.rows)[-1].value))]
        assert shown(app, "#explain").startswith(f"{fmt.count(last.gpus)}x {last.gpu}")

    drive(app, script)
