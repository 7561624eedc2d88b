"""The Estimate form refuses what it cannot plan: every numeric field, the values that
used to crash the app (1e308, inf, nan, a 401-digit number), marked and in the form's
words; and a bug in planning lands in the problems panel instead of killing the app."""

from __future__ import annotations

import stat
import tempfile
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static

from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.context import TuiContext
from gpuplan.tui.estimate import EstimateScreen
from gpuplan.tui.estimate_form import CHECKS, LABELS
from gpuplan.tui.problems import ProblemsScreen
from tests.tui.conftest import drive

BAD_NUMBERS = ["1e308", "inf", "nan", "1" + "0" * 400, "-3", "1e400"]


def status(app: GpuplanApp) -> Static:
    return app.screen.query_one("#status", Static)


async def run(app: GpuplanApp, pilot: Pilot[None]) -> None:
    app.screen.query_one("#params", Input).focus()
    await pilot.press("enter")
    await app.workers.wait_for_complete()
    await pilot.pause()


@pytest.mark.parametrize("field_id", sorted(CHECKS))
def test_every_numeric_field_refuses_huge_and_non_finite_numbers(
    tui_context: TuiContext, field_id: str
) -> None:
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        await run(app, pilot)  # a good run first: its rows must not survive a bad one
        table = app.screen.query_one("#options", DataTable)
        assert table.row_count > 0
        field = app.screen.query_one(f"#{field_id}", Input)
        for bad in BAD_NUMBERS:
            field.value = bad
            await run(app, pilot)
            text = str(status(app).render())
            assert text.startswith(LABELS[field_id] + ":"), (bad, text)
            assert "--" not in text
            assert status(app).has_class("error") and field.has_class("bad")
            assert table.row_count == 0
            screen = app.screen
            assert isinstance(screen, EstimateScreen) and screen.result is None
        assert app.return_code is None  # still running: nothing crashed
        assert app.problems == []  # refused input is not a bug

    drive(app, script)


def test_deadline_needs_a_unit_and_budget_takes_20k(tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        app.screen.query_one("#deadline", Input).value = "14"
        await run(app, pilot)
        assert "deadline: give a unit: 14h or 14d" in str(status(app).render())
        app.screen.query_one("#deadline", Input).value = "14d"
        app.screen.query_one("#budget", Input).value = "20k"
        await run(app, pilot)
        screen = app.screen
        assert isinstance(screen, EstimateScreen) and screen.result is not None
        assert not app.screen.query_one("#deadline", Input).has_class("bad")
        assert all(o.cost_usd is None or o.cost_usd <= 20_000 for o in screen.result.options)
        assert all(o.hours is None or o.hours <= 14 * 24 for o in screen.result.options)

    drive(app, script)


def test_policy_field_finds_a_name_in_the_policies_folder(tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        app.screen.query_one("#policy", Input).value = "a-valid"  # policies/a-valid.yaml
        await run(app, pilot)
        screen = app.screen
        assert isinstance(screen, EstimateScreen) and screen.result is not None
        assert not status(app).has_class("error")

    drive(app, script)


def test_a_bug_in_planning_goes_to_the_problems_panel(
    tui_context: TuiContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gpuplan.usecases.planner.estimate as usecase

    def broken(*args: object, **kwargs: object) -> None:
        raise OverflowError("(34, 'Numerical result out of range')")

    monkeypatch.setattr(usecase, "estimate", broken)
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        await run(app, pilot)
        assert "OverflowError" in str(status(app).render())
        assert [p.source for p in app.problems] == ["estimate"]
        assert app.problems[0].unexpected
        await pilot.press("escape", "exclamation_mark")
        assert isinstance(app.screen, ProblemsScreen)
        shown = str(app.screen.query_one("#problems", Static).render())
        assert "estimate: OverflowError" in shown
        await pilot.press("escape")
        assert isinstance(app.screen, EstimateScreen)
        assert app.return_code is None

    drive(app, script)


def test_an_escaped_bug_exits_non_zero_with_one_line(
    tui_context: TuiContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def explode(self: EstimateScreen) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(EstimateScreen, "action_toggle_pane", explode)
    temp = tmp_path / "temp"  # the temp folder, as tempfile sees it
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        app.screen.query_one("#options", DataTable).focus()
        await pilot.press("t")
        await pilot.pause()

    with pytest.raises(RuntimeError, match="boom"):  # run_test re-raises for pytest
        drive(app, script)
    assert app.return_code == 1
    [report] = (tmp_path / "xdg-state" / "gpuplan" / "crashes").iterdir()
    assert "RuntimeError: boom" in report.read_text(encoding="utf-8")
    assert stat.S_IMODE(report.stat().st_mode) == 0o600
    assert stat.S_IMODE(report.parent.stat().st_mode) == 0o700
    assert list(temp.iterdir()) == []  # nothing in the shared temp folder
