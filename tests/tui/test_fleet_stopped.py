"""A stop the cloud has not caught up with yet: counted as stopped, not stopped twice
(issue 25, item 4)."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Static

from gpuplan.core.lifecycle.instances import Action, GpuInstance, InstanceState
from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.confirm import ConfirmScreen
from gpuplan.tui.context import TuiContext
from tests.tui.conftest import drive
from tests.tui.fleet_fake import LifecycleFake, demo_fleet
from tests.tui.test_fleet_screen import on_fake, open_fleet


class LaggingCloud(LifecycleFake):
    """Accepts the stop, but its listings say "running" for a while (Azure's deallocate
    and GCP's stop are asynchronous)."""

    def act(self, instance: GpuInstance, action: Action) -> InstanceState:
        before = self.refresh_quietly(instance)
        answer = super().act(instance, action)
        self.instances[instance.instance_id] = before
        return answer


def test_a_stopped_instance_counts_as_stopped_and_cannot_be_stopped_again(
    tui_context: TuiContext,
) -> None:
    demo = demo_fleet()
    fake = LaggingCloud(list(demo.instances.values()))
    fake.utilisation = demo.utilisation
    app = GpuplanApp(on_fake(tui_context, fake))

    async def settle(pilot: Pilot[None]) -> None:
        for _ in range(3):
            await app.workers.wait_for_complete()
            await pilot.pause()

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        await pilot.press("l", "y")  # live
        await pilot.press("x")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        assert len(fake.calls_to("stop")) == 1
        status = str(screen.query_one("#status", Static).render())
        assert "0 idle, 1 stopped" in status, status
        await pilot.press("x")  # the same row, still listed as running and idle
        await settle(pilot)
        assert not isinstance(app.screen, ConfirmScreen)
        assert len(fake.calls_to("stop")) == 1

    drive(app, script, size=(160, 30))
