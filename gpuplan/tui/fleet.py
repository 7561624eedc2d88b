"""Fleet screen: a policy's GPU instances, their utilisation and idle verdicts; stop one.

Surveying is :func:`gpuplan.usecases.fleet.survey` in a worker thread (scopes
``--concurrency`` at a time, reported in order as each is read) so progress shows and
the screen never freezes. Stopping is
:func:`gpuplan.usecases.stop_idle.run_stop_idle` on the chosen instance only: first as
a dry run to show the plan, then, once confirmed, for real in LIVE mode (or recorded
as a dry run in DRY RUN mode), under the same lock and into the same ledger as
``gpuplan stop-idle``. Provider failures go to the problems panel (``!``), never
crash the screen; ``/`` filters the rows and a header click sorts them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Label, ProgressBar, Select, Static
from textual.worker import get_current_worker

from gpuplan.core.errors import GpuplanError
from gpuplan.core.idle import IdleVerdict
from gpuplan.tui import format as fmt
from gpuplan.tui.bars import sparkline
from gpuplan.tui.confirm import ConfirmScreen
from gpuplan.tui.context import TuiContext
from gpuplan.tui.fleet_scope import busiest_per_period
from gpuplan.tui.policies import check_file, find_policy_files
from gpuplan.tui.problems import describe
from gpuplan.tui.table import Column, FieldInput, NavTable, choose_columns, fit_text, header

if TYPE_CHECKING:
    from gpuplan.core.catalog import Catalog
    from gpuplan.core.policy import Policy
    from gpuplan.providers.base import LifecycleProvider
    from gpuplan.providers.webhook import Notifier
    from gpuplan.usecases.fleet import Seen
    from gpuplan.usecases.stop_idle import StopIdleResult

SPARK_WIDTH = 24
"""Most characters a sparkline takes; longer windows are bucketed (busiest per bucket)."""
COLUMNS = (
    ("instance", "instance"),
    ("verdict", "verdict"),
    ("idle", "idle for"),
    ("util", "util (window)"),
    ("memory", "GPU mem"),
    ("cpu", "CPU"),
    ("hourly", "$/h"),
    ("gpus", "GPUs"),
    ("state", "state"),
    ("type", "type"),
    ("region", "region"),
)


@dataclass
class FleetView:
    """What one refresh saw: rows, the series behind each sparkline, and problems."""

    policy: Policy
    seen: list[Seen] = field(default_factory=list)
    series: dict[str, list[float | None]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


class FleetScreen(Screen[None]):
    """Policy picker and mode badge on top, instances in the middle, the reason below."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "refresh", "Refresh"),
        Binding("slash", "filter", "Filter"),
        Binding("x", "stop", "Stop"),
        Binding("l", "toggle_live", "Live/Dry run"),
        Binding("escape", "to_table", "Table", show=False),
    ]

    DEFAULT_CSS = """
    FleetScreen #bar { height: 1; }
    FleetScreen #bar Label { width: 8; padding: 0 1; }
    FleetScreen #policy { width: 1fr; }
    FleetScreen #filter { width: 24; margin: 0 1; }
    FleetScreen #filter:focus { background: $accent 40%; }
    FleetScreen #mode { width: 11; text-align: center; text-style: bold; }
    FleetScreen #mode.dry { background: $success; color: $text; }
    FleetScreen #mode.live { background: $error; color: $text; }
    FleetScreen #progress-row { height: 1; }
    FleetScreen #status { width: 1fr; padding: 0 1; }
    FleetScreen ProgressBar { width: 30; }
    FleetScreen #instances { height: 1fr; }
    FleetScreen #detail { height: 3; padding: 0 1; border-top: solid $primary; }
    """

    def __init__(self, context: TuiContext) -> None:
        super().__init__()
        self.context = context
        self.live = False
        self.policies: dict[str, Path] = {}
        self.view: FleetView | None = None
        self.catalog: Catalog | None = None
        self.rows: list[Seen] = []
        """The rows as drawn: filtered by ``/``, sorted by the clicked header."""
        self.sort: tuple[str, bool] | None = None
        self.acted: dict[str, str] = {}
        """Instance id -> what this session did to it, shown until a refresh agrees."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="bar"):
            yield Label("policy")
            yield Select[str]([], prompt="no valid policy", id="policy", compact=True)
            yield FieldInput(placeholder="/ filter", id="filter", compact=True)
            yield Static("DRY RUN", id="mode", classes="dry")
        with Horizontal(id="progress-row"):
            yield Static("", id="status")
            yield ProgressBar(id="progress", show_eta=False)
        yield NavTable(id="instances", cursor_type="row")
        yield Static("", id="detail")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "Fleet"
        table = self.query_one("#instances", DataTable)
        self._draw()
        found = find_policy_files(self.context.policies_dir, self.context.policy_file)
        views = [check_file(path, self.context.catalog_dir) for path in found]
        self.policies = {str(v.path): v.path for v in views if v.policy is not None}
        select = self.query_one("#policy", Select)
        select.set_options([(Path(p).name, p) for p in self.policies])
        table.focus()
        if not self.policies:
            self._status(
                f"No valid policy in {self.context.policies_dir}; see the Policies screen."
            )
            return
        first = str(self.context.policy_file) if self.context.policy_file else None
        select.value = first if first in self.policies else next(iter(self.policies))

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.value in self.policies:
            self.action_refresh()

    # --- refresh -----------------------------------------------------------------

    def selected_policy(self) -> Path | None:
        value = self.query_one("#policy", Select).value
        return self.policies.get(str(value))

    def action_refresh(self) -> None:
        path = self.selected_policy()
        if path is None:
            self.notify("Choose a policy first.", severity="warning")
            return
        self._status(f"Refreshing {path.name}…")
        self.query_one("#progress", ProgressBar).update(total=None, progress=0)
        self._survey(path)

    @work(thread=True, exclusive=True, group="fleet")
    def _survey(self, path: Path) -> None:
        """Load policy and catalog, build providers, survey each scope; report as we go."""
        from gpuplan.core.idle import period_starts
        from gpuplan.usecases.concurrency import DEFAULT_CONCURRENCY, Concurrency
        from gpuplan.usecases.fleet import Survey, idle_rule, survey

        now = self.context.clock()
        try:
            policy, adapters, problems = self._providers(path)
        except GpuplanError as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        view = FleetView(policy, problems=list(problems))
        rule = idle_rule(policy)
        window = max(1, rule.window_minutes // rule.period_minutes)
        periods = period_starts(rule, now)[-window:]  # the sparkline shows the window
        self.app.call_from_thread(self._progress, 0, max(1, len(adapters)))
        done = 0

        def read(adapter: LifecycleProvider, part: Survey) -> None:
            nonlocal done
            done += 1
            view.seen.extend(part.seen)
            view.problems.extend(part.problems)
            view.notices.extend(part.notices)
            for seen in part.seen:
                view.series[seen.instance.instance_id] = busiest_per_period(seen.samples, periods)
            status = f"Read {adapter.scope} ({done}/{len(adapters)})…"
            self.app.call_from_thread(self._status, status)
            self.app.call_from_thread(self._progress, done, max(1, len(adapters)))

        pool = self.context.concurrency or Concurrency(DEFAULT_CONCURRENCY)
        survey(adapters, rule, now, concurrency=pool, on_scope=read)
        if not get_current_worker().is_cancelled:  # a newer refresh replaced this one
            self.app.call_from_thread(self._show, view)

    def _providers(self, path: Path) -> tuple[Policy, list[LifecycleProvider], list[str]]:
        from gpuplan.loaders.catalog import load_catalog
        from gpuplan.usecases.policy import gpu_table, load_policy

        policy = load_policy(path, gpus=gpu_table(self.context.catalog_dir))
        if self.catalog is None:
            self.catalog = load_catalog(self.context.catalog_dir)
        build = self.context.providers_for
        if build is None:
            import os

            from gpuplan.usecases.providers import build_fleet

            fleet = build_fleet(policy, self.catalog, os.environ)
            return policy, fleet.adapters, fleet.problems
        adapters, problems = build(policy, self.catalog)
        return policy, adapters, problems

    def _progress(self, done: int, total: int) -> None:
        self.query_one("#progress", ProgressBar).update(total=total, progress=done)

    def _failed(self, message: str, error: BaseException | None = None) -> None:
        self._status(message)
        self._problem("fleet", error or message)

    def _problem(self, source: str, problem: BaseException | str) -> None:
        report = getattr(self.app, "report_problem", None)
        if report is not None:
            report(source, problem)
        else:
            self.notify(str(problem), title=source, severity="error")

    def _show(self, view: FleetView) -> None:
        self.view = view
        for seen in view.seen:  # the cloud now agrees the action happened: drop the note
            if seen.instance.state.value != "running":
                self.acted.pop(seen.instance.instance_id, None)
        self._draw()
        idle = sum(1 for s in view.seen if s.decision.verdict is IdleVerdict.IDLE)
        self._status(
            f"{view.policy.name}: {fmt.plural(len(view.seen), 'instance')}, {idle} idle"
            + (f", {fmt.plural(len(view.problems), 'problem')} (!)" if view.problems else "")
        )
        for problem in view.problems:
            self._problem("provider", problem)
        for notice in view.notices:
            self.notify(notice, title="provider", severity="warning")

    def _draw(self) -> None:
        """Rows that match the ``/`` filter, in the clicked column's order, in the columns
        that fit the width (most important first, text cut with an ellipsis)."""
        table = self.query_one("#instances", DataTable)
        table.clear(columns=True)
        seen = list(self.view.seen) if self.view else []
        words = self.query_one("#filter", Input).value.lower().split()
        self.rows = [s for s in seen if all(w in row_text(s) for w in words)]
        if self.sort is not None:
            self.rows = sort_rows(self.rows, *self.sort)
        rows = []
        for s in self.rows:
            key = s.instance.instance_id
            series = self.view.series.get(key, []) if self.view else []
            cells = instance_row(s, series, self.acted.get(key))
            rows.append(dict(zip((k for k, _ in COLUMNS), cells, strict=True)))
        layout = fit_columns(rows, self.sort, max(20, self.app.size.width - 3))
        for key, width in layout.items():
            here = self.sort is not None and self.sort[0] == key
            label = header(dict(COLUMNS)[key], here, bool(self.sort and self.sort[1]))
            table.add_column(label, key=key, width=width)
        for s, row in zip(self.rows, rows, strict=True):
            cells = [cut(row[key], width) for key, width in layout.items()]
            table.add_row(*cells, key=s.instance.instance_id)
        self._detail(self.rows[0] if self.rows else None)

    def on_resize(self) -> None:
        if self.view is not None:
            self._draw()

    def on_input_changed(self, event: Input.Changed) -> None:
        self._draw()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_to_table()

    def action_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_to_table(self) -> None:
        self.query_one("#instances", DataTable).focus()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        key = str(event.column_key.value)
        same = self.sort is not None and self.sort[0] == key
        self.sort = (key, not self.sort[1]) if same and self.sort else (key, False)
        self._draw()

    def _status(self, text: str) -> None:
        self.query_one("#status", Static).update(Text(text))

    # --- selection ---------------------------------------------------------------

    def selected(self) -> Seen | None:
        table = self.query_one("#instances", DataTable)
        row = table.cursor_row
        return self.rows[row] if 0 <= row < len(self.rows) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail(self.selected())

    def _detail(self, seen: Seen | None) -> None:
        detail = self.query_one("#detail", Static)
        if seen is None:
            detail.update("")
            return
        inst, d = seen.instance, seen.decision
        name = f" ({inst.name})" if inst.name else ""
        detail.update(Text(f"{inst.instance_id}{name} · {d.verdict.value}: {d.reason}"))

    # --- dry run / live ----------------------------------------------------------

    def action_toggle_live(self) -> None:
        if self.live:
            self._set_live(False)
            return
        body = Text(
            "In LIVE mode a confirmed stop is carried out on the real instance.\n"
            "In DRY RUN mode it is only planned and recorded in the ledger."
        )
        self.app.push_screen(
            ConfirmScreen("Switch to LIVE?", body, confirm_label="Go live (y)"), self._set_live
        )

    def _set_live(self, live: bool | None) -> None:
        self.live = bool(live)
        mode = self.query_one("#mode", Static)
        mode.update("LIVE" if self.live else "DRY RUN")
        mode.set_class(self.live, "live")
        mode.set_class(not self.live, "dry")

    # --- stop --------------------------------------------------------------------

    def action_stop(self) -> None:
        seen = self.selected()
        if seen is None or self.view is None:
            self.notify("No instance selected.", severity="warning")
            return
        if seen.decision.verdict.value != "idle":
            self.notify(
                f"{seen.instance.instance_id} is {seen.decision.verdict.value}, not idle: "
                f"{seen.decision.reason}",
                severity="warning",
            )
            return
        self._status(f"Planning the stop of {seen.instance.instance_id}…")
        self._plan_stop(self.view.policy, seen)

    @work(thread=True, exclusive=True, group="fleet")
    def _plan_stop(self, policy: Policy, seen: Seen) -> None:
        """The use case's dry run on this one instance: what it would do and why."""
        from gpuplan.usecases.stop_idle import run_stop_idle

        try:
            result = run_stop_idle(
                policy,
                [seen.provider],
                apply=False,
                now=self.context.clock(),
                instance_ids={seen.instance.instance_id},
            )
        except GpuplanError as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        except Exception as exc:  # a bug must not kill the app: it goes to the ! panel
            self.app.call_from_thread(self._failed, describe(exc), exc)
            return
        self.app.call_from_thread(self._confirm_stop, policy, seen, result)

    def _confirm_stop(self, policy: Policy, seen: Seen, plan: StopIdleResult) -> None:
        from gpuplan.tui.fleet_text import plan_text

        self._status("Waiting for confirmation…")
        live = self.live
        title = f"{'Stop' if live else 'Dry run: plan the stop of'} {seen.instance.instance_id}?"

        def answered(yes: bool | None) -> None:
            if yes:
                self._execute_stop(policy, seen, live)
            else:
                self._status("Stop cancelled; nothing was done.")

        self.app.push_screen(ConfirmScreen(title, plan_text(plan, live)), answered)

    @work(thread=True, exclusive=True, group="fleet")
    def _execute_stop(self, policy: Policy, seen: Seen, live: bool) -> None:
        """Run the use case for real (LIVE) or as a recorded dry run, under the CLI's lock."""
        from gpuplan.usecases.session import run_session
        from gpuplan.usecases.stop_idle import run_stop_idle

        try:
            with run_session(self.context.ledger_path, 5.0) as ledger:
                result = run_stop_idle(
                    policy,
                    [seen.provider],
                    apply=live,
                    now=self.context.clock(),
                    ledger=ledger,
                    notifier=self._notifier(policy),
                    instance_ids={seen.instance.instance_id},
                )
        except GpuplanError as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        except Exception as exc:  # a bug must not kill the app: it goes to the ! panel
            self.app.call_from_thread(self._failed, describe(exc), exc)
            return
        self.app.call_from_thread(self._stopped, result)

    @staticmethod
    def _notifier(policy: Policy) -> Notifier | None:
        """The policy's webhook, as ``gpuplan stop-idle`` uses it (sent for live runs only)."""
        from gpuplan.providers.webhook import notifier_for

        return notifier_for(policy.notify)

    def _stopped(self, result: StopIdleResult) -> None:
        from gpuplan.tui.fleet_text import acted_labels, outcome_message

        message, failed = outcome_message(result)
        if failed:
            self._problem("stop", message)
        else:
            self.notify(message, title="stop")
        self.acted.update(acted_labels(result))
        self._draw()  # the row says what was done now, before the cloud catches up
        self._status(message)
        self.action_refresh()


PRIORITY = {"instance": 0, "verdict": 0, "idle": 1, "hourly": 1, "region": 1, "util": 2}
"""Which columns stay on a narrow terminal; columns not named here come last."""
SHRINKS = {"instance": (10, 24), "region": (9, 16), "type": (8, 20), "state": (7, 12)}
"""Text columns that may be cut with an ellipsis: (narrowest, widest)."""


def fit_columns(
    rows: list[dict[str, str | Text]], sort: tuple[str, bool] | None, width: int
) -> dict[str, int | None]:
    """The columns that fit ``width``: key -> fixed width (text) or None (as wide as cells)."""
    columns = [
        Column(key, label, PRIORITY.get(key, 3), *SHRINKS.get(key, (0, 0)))
        for key, label in COLUMNS
    ]
    natural = {
        key: max([len(plain(r[key])) for r in rows] + [len(label) + (sort is not None)])
        for key, label in COLUMNS
    }
    chosen = choose_columns(columns, natural, width)
    return {key: (w if key in SHRINKS else None) for key, w in chosen.items()}


def plain(cell: str | Text) -> str:
    return cell.plain if isinstance(cell, Text) else cell


def cut(cell: str | Text, width: int | None) -> str | Text:
    """A cell shortened to ``width`` with an ellipsis; styled cells keep their style."""
    if width is None or len(plain(cell)) <= width:
        return cell
    if isinstance(cell, Text):
        short = cell.copy()
        short.truncate(width, overflow="ellipsis")
        return short
    return fit_text(cell, width)


def row_text(seen: Seen) -> str:
    """What ``/`` searches: name, id, type, region, verdict, state (lower case)."""
    inst = seen.instance
    parts = (inst.name or "", inst.instance_id, inst.instance_type, inst.region)
    return " ".join((*parts, seen.decision.verdict.value, inst.state.value)).lower()


def sort_rows(rows: list[Seen], key: str, descending: bool) -> list[Seen]:
    """Rows ordered by a column; rows without a value (no price, not idle) go last."""

    def value(s: Seen) -> float | str | None:
        inst, d = s.instance, s.decision
        values: dict[str, float | str | None] = {
            "instance": inst.name or inst.instance_id,
            "verdict": d.verdict.value,
            "idle": d.idle_minutes,
            "util": None,
            "hourly": None if inst.hourly_usd is None else float(inst.hourly_usd),
            "gpus": inst.gpu_count,
            "state": inst.state.value,
            "type": inst.instance_type,
            "region": inst.region,
        }
        return values.get(key)

    present = [s for s in rows if value(s) is not None]
    missing = [s for s in rows if value(s) is None]
    present.sort(key=value, reverse=descending)  # type: ignore[arg-type]
    return present + missing


def instance_row(
    seen: Seen, series: list[float | None], acted: str | None = None
) -> list[str | Text]:
    inst, d = seen.instance, seen.decision
    verdict_style = {"idle": "bold yellow", "busy": "green", "unknown": "red"}
    return [
        inst.name or inst.instance_id,
        Text(d.verdict.value, style=verdict_style.get(d.verdict.value, "")),
        fmt.minutes(d.idle_minutes),
        sparkline(series, width=SPARK_WIDTH),
        Text(_percent(d.memory_percent), justify="right"),
        Text(_percent(d.cpu_percent), justify="right"),
        Text(fmt.money(inst.hourly_usd), justify="right"),
        f"{fmt.count(inst.gpu_count)}x {inst.gpu or '?'}",
        Text(acted, style="bold") if acted else inst.state.value,
        inst.instance_type,
        inst.region,
    ]


def _percent(value: float | None) -> str:
    """GPU memory or CPU over the window; a dash when the source does not report it."""
    return fmt.MISSING if value is None else f"{value:.0f}%"
