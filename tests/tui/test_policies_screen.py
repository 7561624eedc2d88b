"""The Policies screen: files found, a broken one's errors with line numbers, budget burn."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from gpuplan.ledger import Ledger, SpendRecord
from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.context import TuiContext
from gpuplan.tui.policies import PoliciesScreen
from tests.tui.conftest import drive


def shown(app: GpuplanApp, widget_id: str) -> str:
    return str(app.screen.query_one(widget_id, Static).render())


def record_spend(context: TuiContext, amount: str) -> None:
    assert context.ledger_path is not None
    ledger = Ledger(context.ledger_path)
    ledger.record_spend(
        SpendRecord(
            policy="team-a",
            month="2026-12",
            recorded_at=datetime(2026, 12, 2, 9, 0, tzinfo=UTC),
            month_to_date_usd=Decimal(amount),
            forecast_usd=Decimal("9000"),
            monthly_usd=Decimal("1000"),
            instances=2,
        )
    )
    ledger.close()


def test_broken_policy_shows_its_errors_with_line_numbers(tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context)

    async def script(pilot: Pilot[None]) -> None:
        await pilot.press("4")
        assert isinstance(app.screen, PoliciesScreen)
        files = app.screen.query_one("#files", DataTable)
        assert [str(c) for c in files.get_column_at(1)] == ["a-valid.yaml", "b-broken.yaml"]
        assert [str(c) for c in files.get_column_at(0)] == ["✓", "✗"]
        assert "team-a · valid" in shown(app, "#verdict")
        await pilot.press("down")
        assert "b-broken.yaml: 2 problems" in shown(app, "#verdict")
        problems = shown(app, "#budget")
        assert "line 6, column 22: idle.threshold_percent:" in problems
        assert "line 7, column 3: idle.windw_minutes: unknown key; did you mean" in problems
        source = shown(app, "#source")
        # The error sits right under its line in the annotated source.
        lines = source.splitlines()
        at = next(i for i, line in enumerate(lines) if "threshold_percent: 150" in line)
        assert lines[at].lstrip().startswith("6 │")
        assert "^ idle.threshold_percent" in lines[at + 1]

    drive(app, script)


def test_budget_burn_from_the_ledger(tui_context: TuiContext) -> None:
    record_spend(tui_context, "850")
    app = GpuplanApp(tui_context, start="policies")

    async def script(pilot: Pilot[None]) -> None:
        budget = shown(app, "#budget")
        assert "Budget 2026-12: $850.00 of $1,000.00; alerts at 50%, 80%, 100%" in budget
        assert "85.0%" in budget
        assert "left: $150" in budget

    drive(app, script)


def test_no_policy_folder_says_what_to_do(tui_context: TuiContext) -> None:
    from dataclasses import replace
    from pathlib import Path

    context = replace(tui_context, policies_dir=Path("/nonexistent/policies"))
    app = GpuplanApp(context, start="policies")

    async def script(pilot: Pilot[None]) -> None:
        assert "No policy files" in shown(app, "#verdict")
        assert app.screen.query_one("#files", DataTable).row_count == 0

    drive(app, script)


def test_policy_flag_opens_that_file_first(tui_context: TuiContext) -> None:
    from dataclasses import replace

    broken = tui_context.policies_dir / "b-broken.yaml"
    app = GpuplanApp(replace(tui_context, policy_file=broken), start="policies")

    async def script(pilot: Pilot[None]) -> None:
        assert "b-broken.yaml: 2 problems" in shown(app, "#verdict")

    drive(app, script)
