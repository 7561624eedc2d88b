"""The Catalog screen on the bundled catalog (684 offers): columns that fit the width,
header sorting both ways, keys typed during a slow redraw, vi keys, region groups,
the too-small notice."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from rich.text import Text
from textual import events
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static

from gpuplan.loaders.paths import bundled_pricing_dir
from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.catalog import DEBOUNCE_S, CatalogScreen
from gpuplan.tui.context import TuiContext
from gpuplan.tui.help import TooSmallScreen
from tests.tui.conftest import drive, fixed_clock

PRICE_COLUMNS = {"on_demand", "spot", "per_gpu", "reserved_1y", "reserved_3y"}


@pytest.fixture
def bundled(tmp_path: Path) -> TuiContext:
    return TuiContext(
        catalog_dir=str(bundled_pricing_dir()),
        policies_dir=tmp_path / "policies",
        clock=fixed_clock,
        ledger_path=tmp_path / "ledger.sqlite",
    )


def table_of(app: GpuplanApp) -> DataTable[str | Text]:
    return app.screen.query_one("#offers", DataTable)


def keys(app: GpuplanApp) -> list[str]:
    return [str(c.key.value) for c in table_of(app).ordered_columns]


def cells(app: GpuplanApp, key: str) -> list[str]:
    return [str(c) for c in table_of(app).get_column(key)]


def status(app: GpuplanApp) -> str:
    return str(app.screen.query_one("#status", Static).render())


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
def test_prices_and_region_fit_and_digits_are_never_cut(
    bundled: TuiContext, size: tuple[int, int]
) -> None:
    app = GpuplanApp(bundled)

    async def script(pilot: Pilot[None]) -> None:
        shown = keys(app)
        # At 80 columns every column `s` sorts by, the region and the GPU; the reserved
        # prices join as the terminal widens (the 3-year one first goes at 80).
        wanted = {"on_demand", "spot", "per_gpu", "tflops", "region", "gpu"}
        assert wanted <= set(shown), shown
        if size[0] >= 120:
            assert set(shown) >= PRICE_COLUMNS, shown
        table = table_of(app)
        total = sum(c.get_render_width(table) for c in table.ordered_columns)
        assert total <= size[0] - 1  # nothing runs off the right edge
        for column in table.ordered_columns:
            key = str(column.key.value)
            if key in PRICE_COLUMNS:
                width = column.get_render_width(table) - 2
                assert all(len(c) <= width for c in cells(app, key))  # whole numbers
                assert all("…" not in c for c in cells(app, key))
        if size[0] >= 120:
            assert "instance" in shown
        else:  # the long names go first, cut with an ellipsis if shown at all
            assert "instance" not in shown or any("…" in c for c in cells(app, "instance"))

    drive(app, script, size=size)


def test_header_click_sorts_both_ways_with_an_arrow(bundled: TuiContext) -> None:
    app = GpuplanApp(bundled)

    async def click(pilot: Pilot[None], key: str) -> None:
        table = table_of(app)
        columns = table.ordered_columns
        index = next(i for i, c in enumerate(columns) if c.key.value == key)
        x = sum(c.get_render_width(table) for c in columns[:index]) + 2
        assert await pilot.click("#offers", offset=(x, 0))
        await pilot.pause()

    def spot() -> list[float]:
        return [float(c.replace(",", "").rstrip("!")) for c in cells(app, "spot") if c != "-"]

    async def script(pilot: Pilot[None]) -> None:
        await click(pilot, "spot")
        assert spot() == sorted(spot()) and len(spot()) > 10
        assert "sort: spot▲" in status(app)
        label = next(c.label for c in table_of(app).ordered_columns if c.key.value == "spot")
        assert str(label).endswith("▲")
        await click(pilot, "spot")
        assert spot() == sorted(spot(), reverse=True)
        assert "sort: spot▼" in status(app)
        assert cells(app, "spot")[0] != "-"  # unpriced rows stay last either way
        await click(pilot, "region")
        regions = cells(app, "region")
        assert regions == sorted(regions) and "sort: region▲" in status(app)

    drive(app, script, size=(120, 40))


def test_keys_typed_after_shift_tab_land_in_the_new_field_during_a_slow_redraw(
    bundled: TuiContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow_fill = CatalogScreen._fill

    def fill(self: CatalogScreen) -> None:
        time.sleep(0.5)  # a slow terminal: drawing the table blocks the event loop
        slow_fill(self)

    monkeypatch.setattr(CatalogScreen, "_fill", fill)
    app = GpuplanApp(bundled)

    async def script(pilot: Pilot[None]) -> None:
        gpu = app.screen.query_one("#gpu", Input)
        gpu.value = "H100"
        gpu.focus()
        await pilot.pause(DEBOUNCE_S + 0.7)
        driver = app._driver
        assert driver is not None
        for key, char in (("ctrl+u", None), ("shift+tab", None), *((c, c) for c in "aws")):
            event = events.Key(key, char)  # typed in one burst, as a fast typist does
            event.set_sender(app)
            driver.send_message(event)
        await pilot.pause(0.3)

        assert app.screen.query_one("#provider", Input).value == "aws"
        assert gpu.value == ""
        await pilot.pause(DEBOUNCE_S + 0.7)
        assert set(cells(app, "provider")) == {"aws"}

    drive(app, script, size=(120, 40))


def test_vi_keys_and_home_end(bundled: TuiContext) -> None:
    app = GpuplanApp(bundled)

    async def script(pilot: Pilot[None]) -> None:
        table = table_of(app)
        assert table.has_focus and table.cursor_row == 0
        await pilot.press("j", "j")
        assert table.cursor_row == 2
        await pilot.press("k")
        assert table.cursor_row == 1
        await pilot.press("G")
        assert table.cursor_row == table.row_count - 1
        await pilot.press("g")
        assert table.cursor_row == 0
        await pilot.press("end")
        assert table.cursor_row == table.row_count - 1
        await pilot.press("home")
        assert table.cursor_row == 0

    drive(app, script, size=(120, 40))


def test_region_group_and_unknown_region(bundled: TuiContext) -> None:
    app = GpuplanApp(bundled)

    async def script(pilot: Pilot[None]) -> None:
        region = app.screen.query_one("#region", Input)
        region.value = "europe"
        await pilot.pause(DEBOUNCE_S + 0.3)
        regions = set(cells(app, "region"))
        assert regions == {"eu-central-1", "eu-west-1", "europe-west4", "westeurope", "eu-north1"}
        region.value = "eu-wset-1"
        await pilot.pause(DEBOUNCE_S + 0.3)
        assert "did you mean eu-west-1" in status(app)
        assert table_of(app).row_count == 0

    drive(app, script, size=(120, 40))


def test_too_small_says_so_and_goes_away(bundled: TuiContext) -> None:
    app = GpuplanApp(bundled)

    async def script(pilot: Pilot[None]) -> None:
        await pilot.resize_terminal(50, 12)
        await pilot.pause()
        assert isinstance(app.screen, TooSmallScreen)
        assert "too small" in str(app.screen.query_one(Static).render())
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert isinstance(app.screen, CatalogScreen)

    drive(app, script, size=(80, 24))


def test_smallest_supported_size_still_shows_rows_and_prices(bundled: TuiContext) -> None:
    app = GpuplanApp(bundled)

    async def script(pilot: Pilot[None]) -> None:
        assert isinstance(app.screen, CatalogScreen)
        table = table_of(app)
        assert table.size.height >= 4  # header and rows, not a zero-height table
        assert {"on_demand", "spot", "region"} <= set(keys(app))
        assert "200 drawn" in status(app)

    drive(app, script, size=(60, 16))
