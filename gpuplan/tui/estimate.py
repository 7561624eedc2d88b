"""Estimate screen: a workload form, the ranked options, a time-vs-cost chart, the arithmetic.

The form's text goes unchanged into :class:`gpuplan.usecases.estimate.EstimateArgs`
(the same words the CLI flags take, parsed and checked by the use case); planning runs
in a worker thread so the screen stays responsive on the full catalog. The explanation
of a selected option is the planner's own ``--explain`` text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import (
    DataTable,
    Footer,
    Header,
    Input,
    Label,
    Select,
    Static,
    TabbedContent,
    TabPane,
)
from textual.worker import get_current_worker

from gpuplan.core.errors import GpuplanError
from gpuplan.tui import format as fmt
from gpuplan.tui.chart import ChartPoint, TimeCostChart
from gpuplan.tui.context import TuiContext

if TYPE_CHECKING:
    from gpuplan.core.catalog import Catalog
    from gpuplan.core.planner.options import Option, PlanResult
    from gpuplan.usecases.estimate import EstimateArgs

MAX_ROWS = 300
"""Rows put in the table; the chart shows every priced option."""
PRECISIONS = ("bf16", "fp16", "fp8", "tf32", "fp32")
TEXT_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("params", "params", "7B"),
    ("tokens", "tokens", "140B"),
    ("gpus", "GPU count", "e.g. 8-64"),
    ("gpu", "GPU", "any, e.g. H100"),
    ("deadline", "deadline", "e.g. 14d"),
    ("budget", "budget $", "e.g. 20000"),
    ("pricing", "pricing", "any, e.g. spot"),
    ("policy", "policy", "optional policy file"),
)
DEFAULTS = {"params": "7B", "tokens": "140B"}


def option_place(option: Option) -> str:
    if option.instance_type is None or option.provider is None:
        return "custom price"
    nodes = f"{option.nodes}x " if option.nodes > 1 else ""
    return f"{option.provider.value} {nodes}{option.instance_type}"


class EstimateScreen(Screen[None]):
    """Form on the left; options, then chart or explanation, on the right."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "run", "Run"),
        Binding("t", "toggle_pane", "Chart/Explain"),
        Binding("escape", "to_table", "Table", show=False),
    ]

    DEFAULT_CSS = """
    EstimateScreen #form { width: 30; padding: 0 1; border-right: solid $primary; }
    EstimateScreen #form Horizontal { height: 1; margin-bottom: 1; }
    EstimateScreen #form Label { width: 10; }
    EstimateScreen #form Input, EstimateScreen #form Select { width: 1fr; }
    EstimateScreen #results { width: 1fr; }
    EstimateScreen #status { height: 2; padding: 0 1; }
    EstimateScreen #status.error { color: $error; }
    EstimateScreen #options { height: 1fr; }
    EstimateScreen TabbedContent { height: 1fr; min-height: 10; }
    EstimateScreen TimeCostChart { height: 1fr; }
    """

    def __init__(self, context: TuiContext) -> None:
        super().__init__()
        self.context = context
        self.result: PlanResult | None = None
        self.catalog: Catalog | None = None
        self.point_of: dict[int, int] = {}
        """Option index -> chart point index (unpriced options are not charted)."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with VerticalScroll(id="form"):
                for field_id, label, hint in TEXT_FIELDS:
                    with Horizontal():
                        yield Label(label)
                        yield Input(
                            DEFAULTS.get(field_id, ""), placeholder=hint, id=field_id, compact=True
                        )
                with Horizontal():
                    yield Label("precision")
                    options = [(p, p) for p in PRECISIONS]
                    yield Select(
                        options, value="bf16", allow_blank=False, id="precision", compact=True
                    )
                with Horizontal():
                    yield Label("rank by")
                    ranks = [("cost", "cost"), ("time", "time")]
                    yield Select(
                        ranks, value="cost", allow_blank=False, id="objective", compact=True
                    )
                yield Static("enter: run · t: chart/explain", classes="hint")
            with Vertical(id="results"):
                yield Static("Fill in the workload and press enter.", id="status")
                table: DataTable[str | Text] = DataTable(
                    id="options", cursor_type="row", zebra_stripes=True
                )
                yield table
                with TabbedContent(id="panes"):
                    with TabPane("Chart", id="chart-pane"):
                        yield TimeCostChart(id="chart")
                    with TabPane("Explain", id="explain-pane"), VerticalScroll():
                        yield Static("Select an option to see its arithmetic.", id="explain")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "Estimate"
        table = self.query_one("#options", DataTable)
        table.add_column("★", key="pareto")
        for key, label in (
            ("gpu", "GPUs"),
            ("hours", "wall time"),
            ("cost", "cost $"),
            ("hourly", "$/h"),
            ("pricing", "pricing"),
            ("where", "where"),
            ("region", "region"),
        ):
            table.add_column(label, key=key)
        self.query_one("#params", Input).focus()

    # --- running -----------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_run()

    def form_args(self) -> EstimateArgs:
        """The form as the use case's arguments (text as typed; blanks mean default)."""
        from gpuplan.usecases.estimate import EstimateArgs

        def text(field_id: str) -> str | None:
            value = self.query_one(f"#{field_id}", Input).value.strip()
            return value or None

        def words(field_id: str) -> list[str]:
            value = text(field_id) or ""
            return [w.strip() for w in value.split(",") if w.strip()]

        return EstimateArgs(
            params=text("params"),
            tokens=text("tokens"),
            gpus=text("gpus"),
            gpu=words("gpu"),
            deadline=text("deadline"),
            budget=text("budget"),
            pricing=words("pricing"),
            precision=str(self.query_one("#precision", Select).value),
            objective=str(self.query_one("#objective", Select).value),
        )

    def action_run(self) -> None:
        self._set_status("Estimating…")
        self.query_one("#options", DataTable).loading = True
        policy = self.query_one("#policy", Input).value.strip() or None
        self._plan(self.form_args(), policy)

    @work(thread=True, exclusive=True, group="estimate")
    def _plan(self, args: EstimateArgs, policy: str | None = None) -> None:
        """Load the catalog once, then plan; the result or the error goes back to the UI."""
        from gpuplan.loaders.catalog import load_catalog
        from gpuplan.usecases.estimate import estimate

        try:
            if self.catalog is None:
                self.catalog = load_catalog(self.context.catalog_dir)
            constraints = None
            if policy is not None:
                from gpuplan.usecases.policy import plan_constraints

                ledger = self.context.ledger_path
                constraints, _ = plan_constraints(
                    policy,
                    db=None if ledger is None else str(ledger),
                    now=self.context.clock(),
                    gpus=self.catalog.gpus,
                )
            result = estimate(self.catalog, args, constraints)
        except GpuplanError as exc:
            self.app.call_from_thread(self._show_error, str(exc))
            return
        if not get_current_worker().is_cancelled:  # a newer run replaced this one
            self.app.call_from_thread(self._show_result, result)

    def _show_error(self, message: str) -> None:
        self.query_one("#options", DataTable).loading = False
        self._set_status(message, error=True)

    def _show_result(self, result: PlanResult) -> None:
        self.result = result
        table = self.query_one("#options", DataTable)
        table.loading = False
        table.clear()
        for index, option in enumerate(result.options[:MAX_ROWS]):
            table.add_row(*option_row(option), key=str(index))
        points: list[ChartPoint] = []
        self.point_of = {}
        for index, o in enumerate(result.options):
            if o.hours is not None and o.hours > 0 and o.cost_usd is not None and o.cost_usd > 0:
                self.point_of[index] = len(points)
                points.append(ChartPoint(o.hours, float(o.cost_usd), o.pareto))
        chart = self.query_one("#chart", TimeCostChart)
        chart.selected = None
        chart.points = tuple(points)
        frontier = sum(o.pareto for o in result.options)
        shown = len(result.options)
        more = f" (top {MAX_ROWS} listed)" if shown > MAX_ROWS else ""
        self._set_status(
            f"{shown} feasible option(s){more} · {frontier} on the Pareto frontier (★) · "
            f"{len(result.infeasible)} infeasible · {result.flops.total:.3g} FLOPs"
            + "".join(f"\n{note}" for note in result.notes)
        )
        if result.options:
            table.focus()
            self._select(0)
        else:
            self.query_one("#explain", Static).update(infeasible_text(result))

    def _set_status(self, text: str, *, error: bool = False) -> None:
        status = self.query_one("#status", Static)
        status.update(Text(text))
        status.set_class(error, "error")

    # --- selection ---------------------------------------------------------------

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self._select(int(event.row_key.value))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.query_one("#panes", TabbedContent).active = "explain-pane"

    def _select(self, index: int) -> None:
        from gpuplan.core.planner.explain import explain

        if self.result is None or index >= len(self.result.options):
            return
        option = self.result.options[index]
        self.query_one("#chart", TimeCostChart).selected = self.point_of.get(index)
        lines = explain(self.result, option)
        header = f"{option.gpus:g}x {option.gpu} · {option_place(option)} · {option.pricing}"
        self.query_one("#explain", Static).update(Text("\n".join([header, *lines])))

    # --- keys --------------------------------------------------------------------

    def action_toggle_pane(self) -> None:
        panes = self.query_one("#panes", TabbedContent)
        panes.active = "explain-pane" if panes.active == "chart-pane" else "chart-pane"

    def action_to_table(self) -> None:
        self.query_one("#options", DataTable).focus()


def option_row(option: Option) -> list[str | Text]:
    right: list[str | Text] = [
        Text(fmt.hours(option.hours), justify="right"),
        Text(fmt.money(option.cost_usd, 0), justify="right"),
        Text(fmt.money(option.hourly_usd), justify="right"),
    ]
    return [
        Text("★", style="bold green") if option.pareto else "",
        f"{fmt.count(option.gpus)}x {option.gpu}",
        *right,
        option.pricing or "-",
        option_place(option),
        option.region or "-",
    ]


def infeasible_text(result: PlanResult) -> Text:
    """Why nothing fits: the first few infeasible options and their reasons."""
    out = Text("No feasible option. Closest misses:\n", style="bold")
    for option in result.infeasible[:8]:
        out.append(f"{fmt.count(option.gpus)}x {option.gpu} {option_place(option)}: ")
        out.append("; ".join(option.reasons) + "\n", style="red")
    return out
