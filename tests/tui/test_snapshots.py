"""SVG snapshots of each screen at 100x30 on the fixed catalog and clock.

Update after an intended change with ``pytest tests/tui --snapshot-update`` and look at
the diff report before committing the new SVGs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.context import TuiContext
from tests.tui.conftest import SNAPSHOT_SIZE


def test_catalog_screen(snap_compare: Any, tui_context: TuiContext) -> None:
    assert snap_compare(GpuplanApp(tui_context), terminal_size=SNAPSHOT_SIZE)


def test_catalog_filtered_to_h100(snap_compare: Any, tui_context: TuiContext) -> None:
    keys = ["slash", "shift+tab", "shift+tab", "shift+tab", *"h100", "enter"]
    assert snap_compare(GpuplanApp(tui_context), press=keys, terminal_size=SNAPSHOT_SIZE)


def test_help_screen(snap_compare: Any, tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context)
    assert snap_compare(app, press=["question_mark"], terminal_size=SNAPSHOT_SIZE)


def test_policies_screen_with_budget_burn(snap_compare: Any, tui_context: TuiContext) -> None:
    from tests.tui.test_policies_screen import record_spend

    record_spend(tui_context, "850")
    app = GpuplanApp(tui_context, start="policies")
    assert snap_compare(app, terminal_size=SNAPSHOT_SIZE)


def test_policies_screen_broken_file(snap_compare: Any, tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context, start="policies")
    assert snap_compare(app, press=["down"], terminal_size=SNAPSHOT_SIZE)


async def _estimate(pilot: Pilot[None]) -> None:
    await pilot.press("enter")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_estimate_screen_chart(snap_compare: Any, tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context, start="estimate")
    assert snap_compare(app, run_before=_estimate, terminal_size=SNAPSHOT_SIZE)


def test_estimate_screen_explain(snap_compare: Any, tui_context: TuiContext) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await _estimate(pilot)
        await pilot.press("down", "enter")
        await pilot.pause()

    app = GpuplanApp(tui_context, start="estimate")
    assert snap_compare(app, run_before=run_before, terminal_size=SNAPSHOT_SIZE)


async def _fleet(pilot: Pilot[None]) -> None:
    await pilot.press("3")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def test_fleet_screen(snap_compare: Any, tui_context: TuiContext) -> None:
    from tests.tui.fleet_fake import demo_fleet
    from tests.tui.test_fleet_screen import on_fake

    app = GpuplanApp(on_fake(tui_context, demo_fleet()))
    assert snap_compare(app, run_before=_fleet, terminal_size=SNAPSHOT_SIZE)


def test_fleet_stop_confirmation(snap_compare: Any, tui_context: TuiContext) -> None:
    from tests.tui.fleet_fake import demo_fleet
    from tests.tui.test_fleet_screen import on_fake

    async def run_before(pilot: Pilot[None]) -> None:
        await _fleet(pilot)
        await pilot.press("x")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    app = GpuplanApp(on_fake(tui_context, demo_fleet()))
    assert snap_compare(app, run_before=run_before, terminal_size=SNAPSHOT_SIZE)


SIZES = [(80, 24), (120, 40)]


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_catalog_bundled_at_size(snap_compare: Any, tmp_path: Path, size: tuple[int, int]) -> None:
    from gpuplan.loaders.paths import bundled_pricing_dir
    from tests.tui.conftest import fixed_clock

    context = TuiContext(
        catalog_dir=str(bundled_pricing_dir()), policies_dir=tmp_path, clock=fixed_clock
    )
    assert snap_compare(GpuplanApp(context), terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_estimate_at_size(
    snap_compare: Any, tui_context: TuiContext, size: tuple[int, int]
) -> None:
    app = GpuplanApp(tui_context, start="estimate")
    assert snap_compare(app, run_before=_estimate, terminal_size=size)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "120x40"])
def test_fleet_at_size(snap_compare: Any, tui_context: TuiContext, size: tuple[int, int]) -> None:
    from tests.tui.fleet_fake import demo_fleet
    from tests.tui.test_fleet_screen import on_fake

    app = GpuplanApp(on_fake(tui_context, demo_fleet()))
    assert snap_compare(app, run_before=_fleet, terminal_size=size)


def test_estimate_refuses_1e308(snap_compare: Any, tui_context: TuiContext) -> None:
    async def run_before(pilot: Pilot[None]) -> None:
        await _estimate(pilot)
        await pilot.press("f")  # at 100 columns the form made room for the results
        pilot.app.screen.query_one("#params").value = "1e308"  # type: ignore[attr-defined]
        pilot.app.screen.query_one("#params").focus()
        await _estimate(pilot)
        pilot.app.screen.query_one("#options").focus()  # no blinking cursor in the picture
        await pilot.pause()

    app = GpuplanApp(tui_context, start="estimate")
    assert snap_compare(app, run_before=run_before, terminal_size=(80, 24))


@pytest.mark.parametrize("size", [SNAPSHOT_SIZE, *SIZES], ids=["100x30", "80x24", "120x40"])
def test_fleet_audit_view(
    snap_compare: Any, tui_context: TuiContext, size: tuple[int, int]
) -> None:
    from tests.tui.fleet_fake import audit_fleet
    from tests.tui.test_fleet_screen import on_fake

    async def run_before(pilot: Pilot[None]) -> None:
        await _fleet(pilot)
        await pilot.press("a")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("down")  # the one-of-eight row: its advice below
        await pilot.pause()

    app = GpuplanApp(on_fake(tui_context, audit_fleet()))
    assert snap_compare(app, run_before=run_before, terminal_size=size)
