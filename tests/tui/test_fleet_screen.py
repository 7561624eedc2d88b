"""The Fleet screen on the fake provider: survey, verdicts, and a confirmed stop."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static

from gpuplan.core.catalog.query import Catalog
from gpuplan.core.lifecycle.idle import IdleVerdict
from gpuplan.core.policy import Policy
from gpuplan.ledger import Ledger
from gpuplan.providers.base import CloudAdapter
from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.confirm import ConfirmScreen
from gpuplan.tui.context import TuiContext
from gpuplan.tui.fleet import FleetScreen
from gpuplan.tui.problems import ProblemsScreen
from tests.tui.conftest import drive
from tests.tui.fleet_fake import NOW, LifecycleFake, demo_fleet, flat_samples, gpu_instance


def on_fake(context: TuiContext, fake: LifecycleFake) -> TuiContext:
    def adapters_for(
        policy: Policy, catalog: Catalog | None
    ) -> tuple[list[CloudAdapter], list[str]]:
        return [fake], []

    return replace(context, adapters_for=adapters_for)


async def open_fleet(app: GpuplanApp, pilot: Pilot[None]) -> FleetScreen:
    await pilot.press("3")
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert isinstance(app.screen, FleetScreen)
    return app.screen


def cells(screen: FleetScreen, key: str) -> list[str]:
    table = screen.query_one("#instances", DataTable)
    return [str(c) for c in table.get_column(key)]


def test_fleet_shows_verdicts_and_sparklines(tui_context: TuiContext) -> None:
    fake = demo_fleet()
    app = GpuplanApp(on_fake(tui_context, fake))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        assert cells(screen, "instance") == ["forgotten-notebook", "llama-pretrain", "no-agent"]
        assert cells(screen, "verdict") == ["idle", "busy", "unknown"]
        util = cells(screen, "util")
        assert set(util[0]) == {"▁"} and set(util[1]) == {"▇"} and set(util[2]) == {"·"}
        assert len(util[0]) == 12  # one character per 5-minute period of the 60-minute window
        assert "3 instances, 1 idle" in str(screen.query_one("#status", Static).render())
        assert str(screen.query_one("#mode", Static).render()) == "DRY RUN"
        # One batch of metrics for the running instances, no actions.
        assert len(fake.calls_to("fetch_utilisation")) == 1
        assert fake.calls_to("stop") == []

    drive(app, script)


def test_stop_an_idle_instance_live_through_the_confirmation(tui_context: TuiContext) -> None:
    fake = demo_fleet()
    app = GpuplanApp(on_fake(tui_context, fake))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        await pilot.press("l")  # ask to go live
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        assert str(screen.query_one("#mode", Static).render()) == "LIVE"

        await pilot.press("x")  # cursor is on the idle instance
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        body = str(app.screen.query_one("#body", Static).render())
        assert "i-0idle" in body and "plan: act → stop" in body and "LIVE" in body
        assert fake.calls_to("stop") == []  # the plan alone acts on nothing

        await pilot.press("y")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await app.workers.wait_for_complete()
        stops = fake.calls_to("stop")
        assert [c.args for c in stops] == [("i-0idle", False)]
        # Re-read first (state, tags), then the gpuplan-acting lease is read back.
        assert [c.args[0] for c in fake.calls_to("refresh")] == ["i-0idle", "i-0idle"]
        assert fake.calls_to("tag")[0].args[0] == "i-0idle"
        row = cells(screen, "instance").index("forgotten-notebook")
        assert cells(screen, "state")[row] != "running"  # the row follows the action

    drive(app, script, size=(160, 30))  # wide enough for the state column
    assert tui_context.ledger_path is not None
    with Ledger(tui_context.ledger_path) as ledger:
        runs = ledger.runs()
        assert [(r.kind, r.policy, r.dry_run, r.status) for r in runs] == [
            ("stop-idle", "team-a", False, "ok")
        ]
        assert runs[0].summary["acted"][0]["instance_id"] == "i-0idle"
        assert ledger.count("actions") == 1


def test_dry_run_confirm_records_but_stops_nothing(tui_context: TuiContext) -> None:
    fake = demo_fleet()
    app = GpuplanApp(on_fake(tui_context, fake))

    async def script(pilot: Pilot[None]) -> None:
        await open_fleet(app, pilot)
        await pilot.press("x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "DRY RUN" in str(app.screen.query_one("#body", Static).render())
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await pilot.pause()

    drive(app, script)
    assert fake.calls_to("stop") == [] and fake.calls_to("tag") == []
    assert tui_context.ledger_path is not None
    with Ledger(tui_context.ledger_path) as ledger:
        assert [(r.dry_run, r.status) for r in ledger.runs()] == [(True, "ok")]
        assert ledger.count("actions") == 0


def test_cancel_and_busy_instances_do_nothing(tui_context: TuiContext) -> None:
    fake = demo_fleet()
    app = GpuplanApp(on_fake(tui_context, fake))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        await pilot.press("x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("n")
        assert app.screen is screen
        assert "cancelled" in str(screen.query_one("#status", Static).render())
        await pilot.press("down", "x")  # the busy one: refused before any plan
        await pilot.pause()
        assert app.screen is screen

    drive(app, script)
    assert fake.calls_to("stop") == []
    assert tui_context.ledger_path is not None
    with Ledger(tui_context.ledger_path) as ledger:
        assert ledger.count("runs") == 0


def test_provider_error_lands_in_the_problems_panel(tui_context: TuiContext) -> None:
    fake = demo_fleet()
    fake.failures["list_instances"] = "throttled by the cloud (RequestLimitExceeded)"
    app = GpuplanApp(on_fake(tui_context, fake))
    app.NOTIFICATION_TIMEOUT = 1  # toasts last 1 s here, not Textual's 5

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        assert screen.query_one("#instances", DataTable).row_count == 0
        messages = [n.message for n in app._notifications]
        assert any("RequestLimitExceeded" in m for m in messages)
        assert "1 problem (!)" in str(screen.query_one("#status", Static).render())
        await pilot.pause(2)  # the toast is gone; the problem is not
        await pilot.press("exclamation_mark")
        assert isinstance(app.screen, ProblemsScreen)
        listed = str(app.screen.query_one("#problems", Static).render())
        assert "provider: " in listed and "RequestLimitExceeded" in listed
        await pilot.press("escape")
        assert app.screen is screen

    drive(app, script)


def test_filter_and_sort_the_fleet(tui_context: TuiContext) -> None:
    app = GpuplanApp(on_fake(tui_context, demo_fleet()))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        await pilot.press("slash", *"busy", "enter")
        assert cells(screen, "instance") == ["llama-pretrain"]
        assert screen.query_one("#instances", DataTable).has_focus
        screen.query_one("#filter", Input).value = ""
        await pilot.pause()
        table = screen.query_one("#instances", DataTable)
        # The header's place is measured once: a click must not move the columns, so the
        # second click at the same spot reverses the same column.
        columns = table.ordered_columns
        index = next(i for i, c in enumerate(columns) if c.key.value == "verdict")
        x = sum(c.get_render_width(table) for c in columns[:index]) + 2
        widths = [c.get_render_width(table) for c in columns]
        for expected in (["busy", "idle", "unknown"], ["unknown", "idle", "busy"]):
            assert await pilot.click("#instances", offset=(x, 0))
            await pilot.pause()
            assert cells(screen, "verdict") == expected
            assert [c.get_render_width(table) for c in table.ordered_columns] == widths
            arrow = "▲" if expected[0] == "busy" else "▼"
            assert f"sort: verdict{arrow}" in str(screen.query_one("#status", Static).render())
        await pilot.press("G")  # the cursor row is what x acts on, in the shown order
        selected = screen.selected()
        assert selected is not None and selected.decision.verdict is IdleVerdict.BUSY

    drive(app, script)


def test_dry_run_outcome_says_what_the_plan_said(tui_context: TuiContext) -> None:
    app = GpuplanApp(on_fake(tui_context, demo_fleet()))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        await pilot.press("x")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("y")
        await app.workers.wait_for_complete()
        await pilot.pause()
        messages = [n.message for n in app._notifications]
        assert any("i-0idle: would stop (dry run, nothing changed)" in m for m in messages)
        assert not any("i-0idle: none" in m for m in messages)
        assert screen.view is not None

    drive(app, script)


def test_narrow_fleet_keeps_verdict_price_and_region(tui_context: TuiContext) -> None:
    app = GpuplanApp(on_fake(tui_context, demo_fleet()))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        table = screen.query_one("#instances", DataTable)
        keys = [str(c.key.value) for c in table.ordered_columns]
        assert {"instance", "verdict", "hourly", "region"} <= set(keys)
        assert sum(c.get_render_width(table) for c in table.ordered_columns) <= 80 - 1

    drive(app, script, size=(80, 24))


def test_a_failure_building_the_adapters_is_a_problem_not_a_crash(
    tui_context: TuiContext,
) -> None:
    """Anything the survey's set-up raises (here the adapter factory) goes to the problems
    panel; the app keeps running (issue 37: every input checked inside error handling)."""

    def broken(policy: Policy, catalog: Catalog | None) -> tuple[list[CloudAdapter], list[str]]:
        raise RuntimeError("adapter factory broke")

    app = GpuplanApp(replace(tui_context, adapters_for=broken))

    async def script(pilot: Pilot[None]) -> None:
        await open_fleet(app, pilot)
        assert app.return_code is None
        assert [p.source for p in app.problems] == ["fleet"]
        assert "RuntimeError: adapter factory broke" in app.problems[0].message

    drive(app, script)


def test_fleet_shows_metrics_suspect_with_the_evidence(tui_context: TuiContext) -> None:
    # Issue 33: three jobs whose GPU utilisation steps to exactly 0 in the same period
    # (and stays there): a metrics fault, unknown with the evidence, never idle.
    names = ("job-a", "job-b", "job-c")
    fake = LifecycleFake([gpu_instance(f"i-0{n}", n) for n in names])
    stepped = {
        g: {t: (0.0 if t >= NOW - timedelta(minutes=90) else 85.0) for t in series}
        for g, series in flat_samples(85.0, hours=4).items()
    }
    fake.utilisation = {f"i-0{n}": stepped for n in names}
    app = GpuplanApp(on_fake(tui_context, fake))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        assert cells(screen, "verdict") == ["unknown"] * 3
        detail = str(screen.query_one("#detail", Static).render())
        assert "unknown: metrics suspect: GPU utilisation stepped to exactly 0" in detail

    drive(app, script)
