"""Keys go to the widget that shows the focus when they arrive, however fast they come.

Each test types as ``pilot.press`` does (idle after every key) and as a person at full
speed does (:func:`burst`: every key queued before the first is handled); both must
land the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Select

from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.catalog import CatalogScreen
from gpuplan.tui.context import TuiContext
from gpuplan.tui.estimate import EstimateScreen
from gpuplan.tui.help import TooSmallScreen
from tests.tui.conftest import burst, drive
from tests.tui.fleet_fake import demo_fleet
from tests.tui.test_fleet_screen import on_fake, open_fleet

Typist = Callable[[Pilot[None], str], Awaitable[None]]


async def press(pilot: Pilot[None], keys: str) -> None:
    await pilot.press(*keys)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


TYPISTS = pytest.mark.parametrize("typist", [press, burst], ids=["press", "burst"])


@TYPISTS
def test_slash_xlarge_on_fleet_is_a_search(tui_context: TuiContext, typist: Typist) -> None:
    fake = demo_fleet()
    app = GpuplanApp(on_fake(tui_context, fake))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        await typist(pilot, "/xlarge")
        assert screen.query_one("#filter", Input).value == "xlarge"
        assert app.focused is screen.query_one("#filter", Input)
        assert app.screen is screen  # no stop plan, no "go live?" dialog
        assert not screen.live and not screen.auditing
        assert fake.calls_to("stop") == []

    drive(app, script)
    assert app.return_code is None  # nor did a `q` anywhere quit


@TYPISTS
def test_slash_a100_on_catalog_is_a_search(tui_context: TuiContext, typist: Typist) -> None:
    app = GpuplanApp(tui_context)

    async def script(pilot: Pilot[None]) -> None:
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        await typist(pilot, "/a100")
        assert screen.query_one("#search", Input).value == "a100"
        assert app.focused is screen.query_one("#search", Input)
        assert app.screen is screen and app.current_mode == "catalog"
        assert screen.sort is None  # no `s` ran either

    drive(app, script)


@TYPISTS
def test_commands_are_text_in_every_field(tui_context: TuiContext, typist: Typist) -> None:
    """Digits, q, ?, ! and the screen's letters typed in a field are the field's text."""
    app = GpuplanApp(on_fake(tui_context, demo_fleet()))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        screen.set_focus(screen.query_one("#filter", Input))
        await typist(pilot, "rxla1234q?!")
        assert screen.query_one("#filter", Input).value == "rxla1234q?!"
        assert app.screen is screen and app.current_mode == "fleet"
        assert not screen.live and not screen.auditing

    drive(app, script)


@TYPISTS
def test_escape_then_commands_reach_the_table(tui_context: TuiContext, typist: Typist) -> None:
    app = GpuplanApp(tui_context)

    async def script(pilot: Pilot[None]) -> None:
        screen = app.screen
        await typist(pilot, ["slash", *"h100", "escape", "s"])
        table = screen.query_one("#offers", DataTable)
        assert screen.query_one("#search", Input).value == "h100"
        assert table.row_count == 3  # escape filtered at once, no debounce left to run
        assert app.focused is table
        assert isinstance(screen, CatalogScreen) and screen.sort == ("on_demand", False)
        await typist(pilot, "j")
        assert table.cursor_row == 1

    drive(app, script)


def test_stop_needs_the_row_focused(tui_context: TuiContext) -> None:
    """`x` from the policy picker does nothing: the stop acts on the focused table's row."""
    fake = demo_fleet()
    app = GpuplanApp(on_fake(tui_context, fake))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        screen.set_focus(screen.query_one("#policy"))
        await press(pilot, "x")
        assert app.screen is screen
        await pilot.press("shift+tab")  # the table again
        assert isinstance(app.focused, DataTable)
        await press(pilot, "x")
        assert app.screen is not screen  # now the plan and its confirmation
        await pilot.press("n")

    drive(app, script)
    assert fake.calls_to("stop") == []


@pytest.mark.parametrize("size", [(100, 30), (80, 24)], ids=["100x30", "80x24"])
def test_typing_in_the_gpu_field_as_an_estimate_finishes(
    tui_context: TuiContext, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    """The result arrives while the person is in another field: the focus stays there and
    the digits they type are text, not screen switches (at 80x24 the form stays too)."""
    import gpuplan.usecases.planner.estimate as usecase

    moved_on = threading.Event()
    real = usecase.estimate

    def held_estimate(*args: Any, **kwargs: Any) -> Any:
        moved_on.wait(timeout=30)  # finishes only once the person is in the GPU field
        return real(*args, **kwargs)

    monkeypatch.setattr(usecase, "estimate", held_estimate)
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        screen = app.screen
        assert isinstance(screen, EstimateScreen)
        await pilot.press("enter")  # run from the params field
        await pilot.press(*["tab"] * 5)  # tokens, method, LoRA rank, GPU count, GPU
        gpu = screen.query_one("#gpu", Input)
        assert app.focused is gpu
        moved_on.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.result is not None and screen.result.options
        await burst(pilot, "A100-80GB")
        assert gpu.value == "A100-80GB"
        assert app.focused is gpu and app.screen is screen
        assert screen.query_one("#form").display

    drive(app, script, size=size)


def test_result_takes_the_focus_when_the_person_waits(tui_context: TuiContext) -> None:
    """Enter in a field and nothing typed since: the ranked table takes the focus."""
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.focused is app.screen.query_one("#options", DataTable)
        await burst(pilot, "jj1")  # on the table the keys are commands again
        assert app.current_mode == "catalog"

    drive(app, script)


def test_q_on_the_too_small_notice_quits(tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context)

    async def script(pilot: Pilot[None]) -> None:
        assert isinstance(app.screen, TooSmallScreen)
        await pilot.press("q")

    drive(app, script, size=(50, 12))
    assert app.return_code == 0


def test_letters_in_an_open_dropdown_search_it(tui_context: TuiContext) -> None:
    """The pricing dropdown's type-to-search takes letters: `s` there is not the sort."""
    app = GpuplanApp(tui_context)

    async def script(pilot: Pilot[None]) -> None:
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        screen.set_focus(screen.query_one("#pricing"))
        await pilot.press("enter")  # open it
        await burst(pilot, "sq1")
        assert screen.sort is None and app.current_mode == "catalog"
        assert app.return_code is None
        await pilot.press("enter")  # pick what the search found
        await pilot.pause()
        assert screen.query_one("#pricing", Select).value == "spot"

    drive(app, script)
