"""The Fleet screen's audit view (`a`): a week of metrics from the fake provider, audited
with the policy's settings: rows by dollars at stake, the split bars, the advice below."""

from __future__ import annotations

from decimal import Decimal

from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import Static

from gpuplan.core.audit.advice import InstanceAudit
from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.audit_view import OVERSIZED, AuditPane
from gpuplan.tui.context import TuiContext
from gpuplan.tui.fleet import FleetScreen
from gpuplan.tui.problems import ProblemsScreen
from tests.tui.conftest import drive
from tests.tui.fleet_fake import audit_fleet
from tests.tui.test_fleet_screen import cells, on_fake, open_fleet

NAMES_BY_STAKE = ["forgotten-notebook", "one-of-eight", "input-bound", "llama-pretrain"]


async def open_audit(app: GpuplanApp, pilot: Pilot[None]) -> tuple[FleetScreen, AuditPane]:
    screen = await open_fleet(app, pilot)
    await pilot.press("a")
    await app.workers.wait_for_complete()
    await pilot.pause()
    return screen, screen.query_one(AuditPane)


def column(pane: AuditPane, key: str) -> list[str | Text]:
    return list(pane.table.get_column(key))


def colours(bar: Text) -> list[str]:
    """One style name per cell of a split bar."""
    out: list[str] = []
    for span in bar.spans:
        out += [str(span.style)] * (span.end - span.start)
    return out


def advice(pane: AuditPane) -> str:
    return str(pane.query_one("#advice", Static).render())


def by_name(pane: AuditPane) -> dict[str, InstanceAudit]:
    return {a.subject.name: a for a in pane.rows}


def test_audit_view_rows_bars_and_advice(tui_context: TuiContext) -> None:
    fake = audit_fleet()
    app = GpuplanApp(on_fake(tui_context, fake))

    async def script(pilot: Pilot[None]) -> None:
        screen, pane = await open_audit(app, pilot)
        assert screen.sub_title == "Fleet · audit"
        assert pane.display and not screen.query_one("#instances").display
        assert [str(c) for c in column(pane, "instance")] == NAMES_BY_STAKE
        stakes = [a.at_stake_per_month for a in pane.rows]
        assert stakes == sorted(stakes, reverse=True) and stakes[0] > 0
        # The truth the fake was given: idle all week, one GPU of eight at 30%, 30%.
        audits = by_name(pane)
        idle, one, feed = (
            audits["forgotten-notebook"],
            audits["one-of-eight"],
            audits["input-bound"],
        )
        assert idle.split.idle == idle.split.paid == Decimal("55.04") * 168
        assert abs(one.split.share(one.split.busy) - 0.30 / 8) < 0.001
        assert abs(feed.split.share(feed.split.busy) - 0.30) < 0.001
        bars = {
            str(n): b for n, b in zip(column(pane, "instance"), column(pane, "split"), strict=True)
        }
        assert all(isinstance(b, Text) and len(b) == 20 for b in bars.values())  # 100 columns
        assert set(colours(bars["forgotten-notebook"])) == {"red"}
        one_bar = bars["one-of-eight"]
        assert isinstance(one_bar, Text)
        assert abs(colours(one_bar).count("green") - 20 * 0.30 / 8) < 1
        assert set(colours(one_bar)) == {"green", "yellow"}
        shaded = round(20 * float(one.oversized / one.split.paid))
        assert one.oversized > 0 and one_bar.plain.count(OVERSIZED) == shaded
        assert one_bar.plain.endswith(OVERSIZED * shaded)
        # The advice of the selected row, with its dollars and evidence.
        text = advice(pane)
        assert "forgotten-notebook" in text and "stop-idle" in text
        assert f"${idle.at_stake_per_month:,.0f}/month" in text
        await pilot.press("down")
        text = advice(pane)
        assert "one-busy-gpu" in text and "1 of 8 GPUs ever busy" in text
        assert one.resize is not None and one.resize.offer.instance_type in text
        assert "(test, 2026-12-01)" in text  # the offer's price source and date
        await pilot.press("down")
        assert "input-bound" in advice(pane) and "CPU was at 95%" in advice(pane)
        await pilot.press("down")
        assert "No advice" in advice(pane) and "▸" not in advice(pane)
        status = str(screen.query_one("#status", Static).render())
        assert "4 audited, 1 skipped" in status
        # One listing and one batched metrics read for the audit (the survey made the others).
        assert len(fake.calls_to("list_instances")) == len(fake.calls_to("fetch_utilisation")) == 2
        await pilot.press("x")  # stops belong to the idle view
        await pilot.pause()
        assert fake.calls_to("stop") == [] and app.screen is screen
        await pilot.press("a")  # back to the idle view, without reading the fleet again
        await pilot.pause()
        assert screen.query_one("#instances").display and not pane.display
        assert len(fake.calls_to("list_instances")) == 2
        assert "forgotten-notebook" in cells(screen, "instance")

    drive(app, script)


def test_audit_view_fits_80_columns_and_filters(tui_context: TuiContext) -> None:
    app = GpuplanApp(on_fake(tui_context, audit_fleet()))

    async def script(pilot: Pilot[None]) -> None:
        _, pane = await open_audit(app, pilot)
        table = pane.table
        keys = [str(c.key.value) for c in table.ordered_columns]
        assert keys[:3] == ["instance", "split", "stake"] and "advice" in keys
        assert sum(c.get_render_width(table) for c in table.ordered_columns) <= 80
        bar = column(pane, "split")[0]
        assert isinstance(bar, Text) and len(bar) == 16
        await pilot.press("slash", *"input", "enter")
        assert [str(c) for c in column(pane, "instance")] == ["input-bound"]
        assert "input-bound" in advice(pane)

    drive(app, script, size=(80, 24))


def test_a_failing_scope_is_a_problem_not_a_crash(tui_context: TuiContext) -> None:
    fake = audit_fleet()
    app = GpuplanApp(on_fake(tui_context, fake))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        fake.failures["fetch_utilisation"] = "throttled (RequestLimitExceeded)"
        await pilot.press("a")
        await app.workers.wait_for_complete()
        await pilot.pause()
        pane = screen.query_one(AuditPane)
        assert pane.table.row_count == 0
        assert "1 problem (!)" in str(screen.query_one("#status", Static).render())
        await pilot.press("exclamation_mark")
        assert isinstance(app.screen, ProblemsScreen)
        listed = str(app.screen.query_one("#problems", Static).render())
        assert "audit: " in listed and "RequestLimitExceeded" in listed

    drive(app, script)
