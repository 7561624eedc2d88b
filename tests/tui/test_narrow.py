"""At 80x24 (the size a new terminal opens at) nothing that matters is cut: the state of
an instance just stopped, the sort's name and column, the audit's dollars at stake, the
oldest price's age, the footer's help and quit, the form's hints; and a long instance
name is shown in full where there is room (issue 37)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Footer, Input, Static

from gpuplan.loaders.paths import bundled_pricing_dir
from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.catalog import CatalogScreen
from gpuplan.tui.catalog_rows import SORT_CYCLE
from gpuplan.tui.confirm import ConfirmScreen
from gpuplan.tui.context import TuiContext
from gpuplan.tui.estimate import EstimateScreen
from tests.tui.conftest import drive, fixed_clock
from tests.tui.fleet_fake import audit_fleet, demo_fleet, gpu_instance
from tests.tui.test_fleet_audit import open_audit
from tests.tui.test_fleet_screen import cells, on_fake, open_fleet
from tests.tui.test_fleet_stopped import LaggingCloud

NARROW = (80, 24)


def plain(app: GpuplanApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def screen_text(app: GpuplanApp) -> str:
    """What the terminal shows, line by line, as plain text."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


@pytest.mark.parametrize("lagging", [False, True], ids=["cloud-agrees", "cloud-lags"])
def test_a_live_stop_at_80_columns_shows_stopped_on_the_row(
    tui_context: TuiContext, lagging: bool
) -> None:
    """Whether the next listing already says stopped or still says running (Azure and GCP
    stop asynchronously), the row says ``stopped`` in a column 80 columns keep."""
    demo = demo_fleet()
    fake = LaggingCloud(list(demo.instances.values())) if lagging else demo
    fake.utilisation = demo.utilisation
    app = GpuplanApp(on_fake(tui_context, fake))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        await pilot.press("l", "y", "x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        for _ in range(2):
            await app.workers.wait_for_complete()
            await pilot.pause()
        row = cells(screen, "instance").index("forgotten-notebook")
        assert cells(screen, "verdict")[row] == "stopped"

    drive(app, script, size=NARROW)


LONG_NAME = "team-research-llama-70b-continued-pretraining-node-07"


@pytest.mark.parametrize("width", [160, 200])
def test_a_long_instance_name_is_whole_where_there_is_room(
    tui_context: TuiContext, width: int
) -> None:
    fake = demo_fleet()
    fake.instances["i-0long"] = gpu_instance("i-0long", LONG_NAME)
    app = GpuplanApp(on_fake(tui_context, fake))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        assert LONG_NAME in cells(screen, "instance")

    drive(app, script, size=(width, 30))


@pytest.fixture
def bundled(tmp_path: Path) -> TuiContext:
    return TuiContext(
        catalog_dir=str(bundled_pricing_dir()),
        policies_dir=tmp_path / "policies",
        clock=fixed_clock,
        ledger_path=tmp_path / "ledger.sqlite",
    )


def test_catalog_sorts_keep_their_name_their_column_and_the_layout(bundled: TuiContext) -> None:
    app = GpuplanApp(bundled)

    async def script(pilot: Pilot[None]) -> None:
        screen = app.screen
        assert isinstance(screen, CatalogScreen)
        table = screen.query_one("#offers", DataTable)
        layouts = set()
        for sort in SORT_CYCLE[1:]:
            await pilot.press("s")
            assert screen.sort == sort
            label = {"on_demand": "on-dem", "spot": "spot", "per_gpu": "$/GPU-h"}.get(
                sort[0], "TF/s/$"
            )
            assert f"sort: {label}" in plain(app, "#status").split("…")[0], sort
            assert sort[0] in [str(c.key.value) for c in table.ordered_columns], sort
            layouts.add(tuple((str(c.key.value), c.width) for c in table.ordered_columns))
        assert len(layouts) == 1, layouts  # no column comes or goes with the sort

    drive(app, script, size=NARROW)


def test_the_audit_summary_keeps_the_dollars_at_stake(tui_context: TuiContext) -> None:
    app = GpuplanApp(on_fake(tui_context, audit_fleet()))

    async def script(pilot: Pilot[None]) -> None:
        _, pane = await open_audit(app, pilot)
        assert pane.result is not None
        summary = pane.result.summary()
        stake = next(p for p in summary.split(", ") if p.endswith("/mo at stake"))
        assert stake in screen_text(app), (stake, screen_text(app))

    drive(app, script, size=NARROW)


def test_the_oldest_price_note_shows_at_80_columns(bundled: TuiContext) -> None:
    app = GpuplanApp(bundled, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, EstimateScreen) and screen.result is not None
        [note] = [n for n in screen.result.notes if "oldest" in n]
        assert note[:40] in " ".join(screen_text(app).split()), screen_text(app)

    drive(app, script, size=NARROW)


@pytest.mark.parametrize("mode", ["catalog", "estimate", "fleet", "policies"])
def test_the_footer_keeps_help_and_quit_at_80_columns(tui_context: TuiContext, mode: str) -> None:
    app = GpuplanApp(tui_context, start=mode)

    async def script(pilot: Pilot[None]) -> None:
        await app.workers.wait_for_complete()
        await pilot.pause()
        footer = app.screen.query_one(Footer)
        last = screen_text(app).splitlines()[footer.region.y]
        assert "Help" in last and "Quit" in last, last

    drive(app, script, size=NARROW)


def test_every_form_hint_fits_its_box_at_80_columns(tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        for box in app.screen.query(Input):
            if box.placeholder and box.id != "filter":
                assert len(box.placeholder) <= box.content_region.width, (box.id, box.placeholder)

    drive(app, script, size=NARROW)
