"""Issue 37's Estimate inputs: a policy path no file system takes is one red line (it
ended the app), the CLI's grammar and limits for GPU counts, budgets and deadlines, the
fine-tuning method and LoRA rank, the reasons when nothing is feasible where the person
is looking, F1 for help."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Select, Static

from gpuplan.core.planner.quantities import LIMITS, MAX_YEARS
from gpuplan.core.planner.workload import Method
from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.chart import TimeCostChart
from gpuplan.tui.context import TuiContext
from gpuplan.tui.estimate import EstimateScreen
from gpuplan.tui.estimate_fields import METHODS
from gpuplan.tui.help import HelpScreen
from tests.tui.conftest import burst, drive
from tests.tui.test_estimate_form import run, status

REPO = Path(__file__).resolve().parents[2]


def estimate_screen(app: GpuplanApp) -> EstimateScreen:
    screen = app.screen
    assert isinstance(screen, EstimateScreen)
    return screen


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("~policies/team.yaml", "no user 'policies' (did you mean ~/policies/team.yaml?)"),
        ("p" * 300, "File name too long"),
        ("a\0b", "contains a NUL byte"),
    ],
)
def test_a_policy_path_no_file_system_takes_is_one_line_not_a_crash(
    tui_context: TuiContext, typed: str, said: str
) -> None:
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        app.screen.query_one("#policy", Input).value = typed
        await run(app, pilot)
        text = str(status(app).render())
        assert text.startswith("policy: ") and said in text, text
        assert "\n" not in text.strip()
        assert app.screen.query_one("#policy", Input).has_class("bad")
        assert app.return_code is None and app.problems == []  # refused, not a bug

    drive(app, script)


@pytest.mark.parametrize(
    ("field_id", "typed", "said"),
    [
        ("gpus", "1_000", "GPU count: expected a GPU count written in digits"),
        ("gpus", "1e3", "GPU count: expected a GPU count written in digits"),
        ("budget", "1e-400", "budget $: 1e-400 is less than a cent"),
        ("budget", "0.001", "budget $: 0.001 is less than a cent"),
        ("budget", "2T", "budget $: 2T is absurdly large (at most $1,000,000,000,000)"),
        ("deadline", "5300w", f"deadline: 5300w is too long (at most {MAX_YEARS} years)"),
        ("lora_rank", "8.5", "LoRA rank: expected a whole number"),
    ],
)
def test_the_form_takes_the_clis_grammar_and_limits(
    tui_context: TuiContext, field_id: str, typed: str, said: str
) -> None:
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        app.screen.query_one(f"#{field_id}", Input).value = typed
        await run(app, pilot)
        assert str(status(app).render()).startswith(said), str(status(app).render())
        assert app.screen.query_one(f"#{field_id}", Input).has_class("bad")
        assert estimate_screen(app).result is None

    drive(app, script)


def test_the_docs_state_the_limits_the_code_applies() -> None:
    """One constant per limit: the guide quotes the values the parsers refuse above."""
    text = " ".join((REPO / "docs/tui.md").read_text(encoding="utf-8").split())
    assert f"deadlines up to {MAX_YEARS} years" in text
    assert f"up to {LIMITS['--gpus']:,.0f} GPUs" in text
    assert f"params up to {LIMITS['--params'] / 1e12:,.0f}T" in text


def test_method_and_lora_rank_reach_the_planner(tui_context: TuiContext) -> None:
    assert {m.value for m in Method} == set(METHODS)
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        screen = estimate_screen(app)
        screen.query_one("#tokens", Input).value = "2B"
        screen.query_one("#method", Select).value = "qlora"
        screen.query_one("#lora_rank", Input).value = "64"
        await run(app, pilot)
        assert screen.result is not None, str(status(app).render())
        setup = screen.result.workload.setup
        assert (setup.method, setup.lora_rank) == (Method.QLORA, 64)
        screen.query_one("#method", Select).value = "pretrain"
        await run(app, pilot)  # a rank without adapters: the planner's own refusal
        text = str(status(app).render())
        assert text.startswith("LoRA rank contradicts method pretrain"), text
        assert screen.query_one("#lora_rank", Input).has_class("bad")

    drive(app, script)


def test_nothing_feasible_shows_each_reason_once_on_the_visible_tab(
    tui_context: TuiContext,
) -> None:
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        screen = estimate_screen(app)
        screen.query_one("#budget", Input).value = "1"
        await run(app, pilot)
        assert screen.result is not None and not screen.result.options
        chart = screen.query_one("#chart", TimeCostChart)
        assert chart.display and chart.region.height > 0  # the tab shown is the chart
        shown = str(chart.render())
        assert "No feasible option. Why:" in shown
        lines = [line for line in shown.splitlines()[1:] if line]
        reasons = [re.sub(r" \(\d+ options\)$", "", line) for line in lines]
        assert reasons and len(reasons) == len(set(reasons)), shown  # each reason once
        assert "budget" in shown

    drive(app, script)


def test_f1_opens_help_from_a_text_field_and_closes_it(tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        field = app.screen.query_one("#params", Input)
        assert app.screen.focused is field
        await pilot.press("question_mark")  # text in a field
        assert not isinstance(app.screen, HelpScreen) and field.value.endswith("?")
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("f1")
        assert isinstance(app.screen, EstimateScreen)

    drive(app, script)


@pytest.mark.parametrize("typed", ["/a100", "/h100 spot"])
def test_slash_on_the_estimate_results_is_a_filter_never_a_screen_key(
    tui_context: TuiContext, typed: str
) -> None:
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        screen = estimate_screen(app)
        await run(app, pilot)
        assert screen.result is not None
        await burst(pilot, ["tab", *typed])  # the focus leaves the table first
        assert app.screen is screen and screen.sort is None
        assert screen.query_one("#filter", Input).value == typed[1:]
        table = screen.query_one("#options", DataTable)
        shown = [screen.result.options[int(str(k.value))] for k in table.rows]
        words = typed[1:].lower().split()
        assert all(
            all(w in f"{o.gpu} {o.pricing} {o.instance_type}".lower() for w in words) for o in shown
        )
        assert 0 < len(shown) < len(screen.result.options) or not shown

    drive(app, script)


def test_slash_on_policies_filters_the_files(tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context, start="policies")

    async def script(pilot: Pilot[None]) -> None:
        screen = app.screen
        await burst(pilot, list("/a1"))  # `1` would have switched to the Catalog
        assert app.screen is screen
        assert screen.query_one("#filter", Input).value == "a1"
        await burst(pilot, ["backspace", "backspace", *"valid", "enter"])
        table = screen.query_one("#files", DataTable)
        assert [str(k.value) for k in table.rows] == [
            str(tui_context.policies_dir / "a-valid.yaml")
        ]
        assert screen.focused is table
        assert "team-a" in str(screen.query_one("#verdict", Static).render())

    drive(app, script)
