"""The Fleet screen's status line says the exempt dollars per hour and who holds them."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Static

from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.context import TuiContext
from tests.tui.conftest import drive
from tests.tui.fleet_fake import LifecycleFake, flat_samples, gpu_instance
from tests.tui.test_fleet_screen import on_fake, open_fleet


def test_status_line_counts_exempt_dollars_by_holder(tui_context: TuiContext) -> None:
    held = gpu_instance("i-0keep", "kept-eval")
    held = held.model_copy(update={"labels": {"gpuplan-keep": "2026-12-20", "owner": "ml"}})
    ended = gpu_instance("i-0ended", "ended-keep")
    ended = ended.model_copy(update={"labels": {"gpuplan-keep": "2026-11-30", "owner": "ml"}})
    fake = LifecycleFake([held, ended, gpu_instance("i-0busy", "llama-pretrain")])
    fake.utilisation = {i: flat_samples(85.0) for i in ("i-0keep", "i-0ended", "i-0busy")}
    app = GpuplanApp(on_fake(tui_context, fake))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        status = str(screen.query_one("#status", Static).render())
        assert "exempt $55.04/h (ml x1)" in status  # the ended exemption does not count

    drive(app, script)
