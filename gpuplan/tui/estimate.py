"""Estimate screen: a workload form, the ranked options, a time-vs-cost chart, the arithmetic.

The form's text goes unchanged into :class:`gpuplan.usecases.planner.estimate.EstimateArgs`
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
from textual.widgets import (
    DataTable,
    Footer,
    Header,
    Input,
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
from gpuplan.tui.estimate_fields import CHOICE_FIELDS, FORM_WIDTH, TEXT_FIELDS, compose_form
from gpuplan.tui.estimate_form import check_form, in_form_words, resolve_policy
from gpuplan.tui.estimate_rows import (
    COLUMNS,
    TEXT_COLUMNS,
    infeasible_text,
    mark_cell,
    option_cells,
    option_place,
    option_text,
    sorted_indexes,
)
from gpuplan.tui.keys import LEAVE_FIELD, RoutedScreen, command, focus_now
from gpuplan.tui.problems import describe
from gpuplan.tui.table import FieldInput, NavTable, choose_columns, fit_text, header

if TYPE_CHECKING:
    from textual.widget import Widget

    from gpuplan.core.catalog.query import Catalog
    from gpuplan.core.planner.options import Option, PlanResult
    from gpuplan.usecases.planner.estimate import EstimateArgs

MAX_ROWS = 300
"""Rows put in the table; the chart shows every priced option."""
NARROW = 110
"""Below this many columns the form hides itself when results arrive (``f`` brings it
back), so that every price column and the region fit beside each other."""


class EstimateScreen(RoutedScreen):
    """Form on the left; options, then chart or explanation, on the right."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "run", "Run"),
        command("t", "toggle_pane", "Chart/Explain"),
        command("f", "toggle_form", "Form"),
        command("slash", "filter", "Filter"),
        Binding("escape", "to_table", "Table", show=False),
        *LEAVE_FIELD,
    ]

    DEFAULT_CSS = """
    EstimateScreen #form { width: FORM_WIDTH; padding: 0 1; border-right: solid $primary; }
    EstimateScreen #form Input:focus { background: $accent 40%; text-style: bold; }
    EstimateScreen #form Input.bad { background: $error 40%; }
    EstimateScreen #form Horizontal { height: 1; margin-bottom: 1; }
    EstimateScreen #form Label { width: 10; }
    EstimateScreen #form Input, EstimateScreen #form Select { width: 1fr; }
    EstimateScreen #results { width: 1fr; }
    EstimateScreen #status { height: auto; min-height: 2; max-height: 5; padding: 0 1; }
    EstimateScreen #filter { height: 1; margin: 0 1; width: 1fr; }
    EstimateScreen #filter:focus { background: $accent 40%; }
    EstimateScreen #status.error { color: $error; }
    EstimateScreen #options { height: 1fr; }
    EstimateScreen TabbedContent { height: 1fr; min-height: 10; }
    EstimateScreen TimeCostChart { height: 1fr; }
    """.replace("FORM_WIDTH", str(FORM_WIDTH))

    def __init__(self, context: TuiContext) -> None:
        super().__init__()
        self.context = context
        self.result: PlanResult | None = None
        self.catalog: Catalog | None = None
        self.point_of: dict[int, int] = {}
        """Option index -> chart point index (unpriced options are not charted)."""
        self._layout: dict[str, int] = {}
        self._run_from: Widget | None = None
        """What had the focus when the last run started; the result may take the focus
        only from there, and only if nothing was typed since (see :meth:`_may_take_focus`)."""
        self.sort: tuple[str, bool] | None = None
        """(column, descending) from a header click; None: the planner's ranking."""
        self._run_form: tuple[str, ...] = ()
        """The form's text when the last run started."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with VerticalScroll(id="form"):
                yield from compose_form()
                yield Static("enter: run · t: chart/explain", classes="hint")
            with Vertical(id="results"):
                yield Static("Fill in the workload and press enter.", id="status")
                yield FieldInput(placeholder="/ filter the options", id="filter", compact=True)
                yield NavTable(id="options", cursor_type="row", zebra_stripes=True)
                with TabbedContent(id="panes"):
                    with TabPane("Chart", id="chart-pane"):
                        yield TimeCostChart(id="chart")
                    with TabPane("Explain", id="explain-pane"), VerticalScroll():
                        yield Static("Select an option to see its arithmetic.", id="explain")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "Estimate"
        self._draw_rows()
        self.query_one("#params", Input).focus()

    # --- running -----------------------------------------------------------------

    def action_leave_field(self, submit: bool) -> None:
        """``enter`` in a field runs the estimate (the focus stays until the result);
        ``escape`` goes to the table."""
        field = self.focused
        if not submit or field is self.query_one("#filter"):
            self.action_to_table()  # the filter applies as it is typed
        elif field is not None:
            field.call_later(self.action_run)  # after the keys typed before enter

    def _form_text(self) -> tuple[str, ...]:
        return tuple(self.query_one(f"#{f}", Input).value for f in TEXT_FIELDS)

    def form_args(self) -> EstimateArgs | None:
        """The form as the use case's arguments, or None with each bad field marked."""
        from gpuplan.usecases.planner.estimate import EstimateArgs

        form = {f: self.query_one(f"#{f}", Input).value for f in TEXT_FIELDS}
        checked = check_form(form)
        for field_id in TEXT_FIELDS:
            self.query_one(f"#{field_id}", Input).set_class(field_id in checked.problems, "bad")
        if checked.problems:
            self._clear_results()
            self._set_status("\n".join(checked.problems.values()), error=True)
            return None
        values = checked.values
        values.update({f: str(self.query_one(f"#{f}", Select).value) for f in CHOICE_FIELDS})

        def words(field_id: str) -> list[str]:
            return [w.strip() for w in values.get(field_id, "").split(",") if w.strip()]

        return EstimateArgs(
            params=values.get("params"),
            tokens=values.get("tokens"),
            gpus=values.get("gpus"),
            gpu=words("gpu"),
            deadline=values.get("deadline"),
            budget=values.get("budget"),
            pricing=words("pricing"),
            precision=values["precision"],
            objective=values["objective"],
            method=values["method"],
            lora_rank=values.get("lora_rank"),
        )

    def action_run(self) -> None:
        args = self.form_args()
        if args is None:
            return
        self._set_status("Estimating…")
        self._run_from, self._run_form = self.focused, self._form_text()
        self.query_one("#options", DataTable).loading = True
        self._plan(args, self.query_one("#policy", Input).value.strip() or None)

    @work(thread=True, exclusive=True, group="estimate")
    def _plan(self, args: EstimateArgs, policy: str | None = None) -> None:
        """Load the catalog once, then plan; the result or the error goes back to the UI."""
        from gpuplan.loaders.catalog import load_catalog
        from gpuplan.usecases.planner.estimate import estimate

        try:
            if self.catalog is None:
                self.catalog = load_catalog(self.context.catalog_dir, fast=True)
            constraints = None
            if policy is not None:
                from gpuplan.usecases.policy import plan_constraints

                ledger = self.context.ledger_path
                constraints, _ = plan_constraints(
                    resolve_policy(policy, self.context.policies_dir),
                    db=None if ledger is None else str(ledger),
                    now=self.context.clock(),
                    gpus=self.catalog.gpus,
                )
            result = estimate(self.catalog, args, constraints, today=self.context.clock().date())
        except GpuplanError as exc:
            self.app.call_from_thread(self._show_error, str(exc))
            return
        except Exception as exc:  # a bug must not kill the app: it goes to the ! panel
            self.app.call_from_thread(self._show_error, describe(exc), exc)
            return
        if not get_current_worker().is_cancelled:  # a newer run replaced this one
            self.app.call_from_thread(self._show_result, result)

    def _show_error(self, message: str, unexpected: Exception | None = None) -> None:
        """A refused or failed run: the field marked, the old results gone, one line."""
        self.query_one("#options", DataTable).loading = False
        self._clear_results()
        text, field_id = in_form_words(message)
        if field_id is not None and self.query(f"#{field_id}"):
            self.query_one(f"#{field_id}").add_class("bad")
        self._set_status(text, error=True)
        if unexpected is not None:
            report = getattr(self.app, "report_problem", None)
            if report is not None:
                report("estimate", unexpected)

    def _clear_results(self) -> None:
        self.result = None
        self.point_of = {}
        self.query_one("#form").display = True  # the field to fix is in it
        self._draw_rows()
        chart = self.query_one("#chart", TimeCostChart)
        chart.selected = None
        chart.empty = None
        chart.points = ()
        self.query_one("#explain", Static).update("")

    def _draw_rows(self) -> None:
        """The options in the columns that fit the results pane, most important first."""
        table = self.query_one("#options", DataTable)
        table.clear(columns=True)
        order = sorted_indexes(self.result.options, self.sort) if self.result else []
        words = self.query_one("#filter", Input).value.lower().split()
        if words and self.result is not None:
            found = self.result.options
            order = [i for i in order if all(w in option_text(found[i]) for w in words)]
        options = [self.result.options[i] for i in order[:MAX_ROWS]] if self.result else []
        rows = [option_cells(o) for o in options]
        natural = {c.key: max([len(r[c.key]) for r in rows] + [len(c.label)]) for c in COLUMNS}
        form = FORM_WIDTH if self.query_one("#form").display else 0
        width = max(20, self.app.size.width - form - 4)
        self._layout = choose_columns(COLUMNS, natural, width)
        for key, w in self._layout.items():
            text = next(c.label for c in COLUMNS if c.key == key)
            here = self.sort is not None and self.sort[0] == key
            label = header(text, here, bool(self.sort and self.sort[1]), w)
            # A fixed width: an auto width is measured at the next layout and raced the draw.
            table.add_column(label, key=key, width=w)
        for index, option, row in zip(order, options, rows, strict=False):
            table.add_row(*self._cells(option, row), key=str(index))  # key: the rank

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """Sort by the clicked column; a second click reverses it (the ranking stays in
        the result: row keys and the chart keep each option's rank)."""
        key = str(event.column_key.value)
        same = self.sort is not None and self.sort[0] == key
        self.sort = (key, not self.sort[1]) if same and self.sort else (key, False)
        self._draw_rows()

    def _cells(self, option: Option, row: dict[str, str]) -> list[str | Text]:
        out: list[str | Text] = []
        for key, width in self._layout.items():
            if key == "mark":
                out.append(mark_cell(option))
            elif key in TEXT_COLUMNS:
                out.append(Text(fit_text(row[key], width)))
            else:
                out.append(Text(row[key], justify="right"))
        return out

    def on_resize(self) -> None:
        self._draw_rows()

    def _show_result(self, result: PlanResult) -> None:
        self.result = result
        self.sort = None  # a new result is shown in its ranking first
        for field_id in TEXT_FIELDS:
            self.query_one(f"#{field_id}", Input).remove_class("bad")
        table = self.query_one("#options", DataTable)
        table.loading = False
        take_focus = bool(result.options) and self._may_take_focus()
        if take_focus and self.app.size.width < NARROW:
            self.query_one("#form").display = False  # room for every price column
        self._draw_rows()
        points: list[ChartPoint] = []
        self.point_of = {}
        for index, o in enumerate(result.options):
            if o.hours is not None and o.hours > 0 and o.cost_usd is not None and o.cost_usd > 0:
                self.point_of[index] = len(points)
                points.append(ChartPoint(o.hours, float(o.cost_usd), o.pareto))
        chart = self.query_one("#chart", TimeCostChart)
        chart.selected = None
        chart.empty = None if result.options else infeasible_text(result)
        chart.points = tuple(points)
        frontier = sum(o.pareto for o in result.options)
        shown = len(result.options)
        more = f" (top {MAX_ROWS} listed)" if shown > MAX_ROWS else ""
        self._set_status(
            f"{fmt.plural(shown, 'feasible option')}{more} · {frontier} on the Pareto "
            f"frontier (★) · {len(result.infeasible):,} infeasible · "
            f"{result.flops.total:.3g} FLOPs" + "".join(f"\n{note}" for note in result.notes)
        )
        if take_focus:
            focus_now(table)
        if result.options:
            self._select(0)
        else:
            self.query_one("#explain", Static).update(infeasible_text(result))

    def _may_take_focus(self) -> bool:
        """A finished run moves the focus to its table only if the person is still where
        they started it and has typed nothing since: never from a field they moved on to
        (the next digit typed there would be a screen switch on the table)."""
        return self.focused is self._run_from and self._form_text() == self._run_form

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
        header = (
            f"{fmt.count(option.gpus)}x {option.gpu} · {option_place(option)} · {option.pricing}"
        )
        self.query_one("#explain", Static).update(Text("\n".join([header, *lines])))

    # --- keys --------------------------------------------------------------------

    def action_toggle_pane(self) -> None:
        panes = self.query_one("#panes", TabbedContent)
        panes.active = "explain-pane" if panes.active == "chart-pane" else "chart-pane"

    def action_toggle_form(self) -> None:
        """Show or hide the form; shown, it takes the focus (the params field)."""
        form = self.query_one("#form")
        form.display = not form.display
        self._draw_rows()
        if form.display:
            focus_now(self.query_one("#params", Input))
        else:
            focus_now(self.query_one("#options", DataTable))

    def action_to_table(self) -> None:
        focus_now(self.query_one("#options", DataTable))

    def action_filter(self) -> None:
        """``/``: the filter box above the options (GPU, instance, cloud, region, pricing)."""
        focus_now(self.query_one("#filter", Input))

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self._draw_rows()
