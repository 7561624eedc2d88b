"""The Fleet stop dialog names a Kubernetes workload as a workload (scaled down or
suspended, not stopped) and says how it is undone; an instance keeps its words."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from gpuplan.core.lifecycle.instances import RiskFacts
from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.context import TuiContext
from tests.tui.conftest import drive
from tests.tui.fleet_fake import demo_fleet
from tests.tui.test_fleet_screen import on_fake, open_fleet
from tests.tui.test_fleet_workloads import NOTEBOOK, cluster

UNDO = f"gpuplan restore {NOTEBOOK}"


def _dialog(app: GpuplanApp) -> tuple[str, str]:
    return (
        str(app.screen.query_one("#title", Static).render()),
        str(app.screen.query_one("#body", Static).render()),
    )


def test_the_dialog_for_a_workload_says_workload_and_its_undo(tui_context: TuiContext) -> None:
    fake = cluster()
    fake.instances[NOTEBOOK] = fake.instances[NOTEBOOK].model_copy(
        update={"risk": RiskFacts(undo=UNDO)}
    )
    app = GpuplanApp(on_fake(tui_context, fake))
    seen: list[tuple[str, str]] = []

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        table = screen.query_one("#instances", DataTable)
        names = [str(c) for c in table.get_column("instance")]
        row = next(i for i, n in enumerate(names) if n.startswith(NOTEBOOK[:12]))
        table.move_cursor(row=row)
        await pilot.pause()
        await pilot.press("x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        seen.append(_dialog(app))
        await pilot.press("n")

    drive(app, script, size=(160, 40))
    [(title, body)] = seen
    assert title == f"Dry run: plan the stop of workload {NOTEBOOK}?"
    assert f"undo: {UNDO}" in body
    assert "nothing is scaled down or suspended" in body
    assert fake.calls_to("stop") == []


def test_the_dialog_for_an_instance_keeps_its_words(tui_context: TuiContext) -> None:
    app = GpuplanApp(on_fake(tui_context, demo_fleet()))
    seen: list[tuple[str, str]] = []

    async def script(pilot: Pilot[None]) -> None:
        await open_fleet(app, pilot)
        await pilot.press("x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        seen.append(_dialog(app))
        await pilot.press("n")

    drive(app, script)
    [(title, body)] = seen
    assert title.startswith("Dry run: plan the stop of i-") and "workload" not in title
    assert "nothing is stopped." in body and "undo:" not in body
