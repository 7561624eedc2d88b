"""Fleet screen: a policy's GPU instances, their utilisation and idle verdicts; stop one.

Surveying is :func:`gpuplan.usecases.lifecycle.survey.survey` in a worker thread (scopes
``--concurrency`` at a time, reported in order as each is read) so progress shows and
the screen never freezes. Stopping one instance (``x``, planned as a dry run first,
then carried out in LIVE mode or recorded in DRY RUN mode) is
:class:`gpuplan.tui.fleet_stop.StopActions`, this screen's base. Provider failures go
to the problems panel (``!``), never crash the screen; ``/`` filters the rows and a
header click sorts them.

``a`` switches to the audit view (:mod:`gpuplan.tui.audit_view`): the same policy's
instances over its ``audit.period_days`` (hourly aggregates) through
:func:`gpuplan.usecases.audit.live.audit_fleet`, in a worker like the refresh, with
the same adapters, catalog and clock; ``a`` again goes back to the idle view.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import DataTable, Footer, Header, Input, Label, ProgressBar, Select, Static
from textual.worker import get_current_worker

from gpuplan.core.errors import GpuplanError
from gpuplan.core.lifecycle.instances import InstanceState
from gpuplan.tui.audit_view import AuditPane, AuditResult
from gpuplan.tui.context import TuiContext
from gpuplan.tui.fleet_rows import (
    COLUMNS,
    cut,
    fit_columns,
    instance_row,
    is_workload,
    row_text,
    sort_rows,
)
from gpuplan.tui.fleet_scope import busiest_per_period
from gpuplan.tui.fleet_stop import StopActions
from gpuplan.tui.fleet_view import FleetView, idle_summary, load_adapters, stranded_text
from gpuplan.tui.keys import LEAVE_FIELD, command, focus_now
from gpuplan.tui.policies import check_file, find_policy_files
from gpuplan.tui.problems import describe
from gpuplan.tui.table import FieldInput, NavTable, header

if TYPE_CHECKING:
    from gpuplan.core.catalog.query import Catalog
    from gpuplan.core.policy import Policy
    from gpuplan.providers.base import CloudAdapter
    from gpuplan.usecases.lifecycle.survey import Seen


class FleetScreen(StopActions):
    """Policy picker and mode badge on top, instances in the middle, the reason below."""

    BINDINGS: ClassVar[list[BindingType]] = [
        command("r", "refresh", "Refresh"),
        command("slash", "filter", "Filter"),
        command("x", "stop", "Stop"),
        command("l", "toggle_live", "Live/Dry run"),
        command("a", "toggle_audit", "Audit"),
        Binding("escape", "to_table", "Table", show=False),
        *LEAVE_FIELD,
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
    FleetScreen #stranded { height: auto; max-height: 4; padding: 0 1; color: $warning; }
    FleetScreen #audit { display: none; }
    FleetScreen.audit #audit { display: block; }
    FleetScreen.audit #instances, FleetScreen.audit #detail { display: none; }
    FleetScreen.audit #stranded { display: none; }
    """

    def __init__(self, context: TuiContext) -> None:
        super().__init__(context)
        self.policies: dict[str, Path] = {}
        self.catalog: Catalog | None = None
        self.rows: list[Seen] = []
        """The rows as drawn: filtered by ``/``, sorted by the clicked header."""
        self.sort: tuple[str, bool] | None = None
        self.shown: dict[str, Path] = {}
        """View ("idle", "audit") -> the policy file its rows came from."""

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
        yield Static("", id="stranded")
        yield AuditPane(id="audit")
        yield Footer(compact=True)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``x`` acts on the row the focused table shows, never from another widget."""
        if action == "stop" and not isinstance(self.focused, DataTable):
            return None
        return super().check_action(action, parameters)

    def on_mount(self) -> None:
        self.sub_title = "Fleet"
        table = self.query_one("#instances", DataTable)
        self._draw()
        try:
            found = find_policy_files(self.context.policies_dir, self.context.policy_file)
        except OSError as exc:
            found = []
            self.app.call_later(self._problem, "policies", f"{self.context.policies_dir}: {exc}")
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

    @property
    def auditing(self) -> bool:
        """The audit view is showing (``a``)."""
        return self.has_class("audit")

    def action_refresh(self) -> None:
        path = self.selected_policy()
        if path is None:
            self.notify("Choose a policy first.", severity="warning")
            return
        bar = self.query_one("#progress", ProgressBar)
        bar.display = True
        bar.update(total=None, progress=0)
        if self.auditing:
            self._status(f"Auditing {path.name}…")
            self._audit(path)
        else:
            self._status(f"Refreshing {path.name}…")
            self._survey(path)

    def action_toggle_audit(self) -> None:
        """Idle view <-> audit view; a view not yet read for this policy is read now."""
        self.toggle_class("audit")
        self.sub_title = "Fleet · audit" if self.auditing else "Fleet"
        self.action_to_table()
        path = self.selected_policy()
        view = "audit" if self.auditing else "idle"
        if path is not None and self.shown.get(view) != path:
            self.action_refresh()
            return
        pane = self.query_one(AuditPane)
        if self.auditing and pane.result is not None:
            self._status(pane.result.summary())
        elif not self.auditing and self.view is not None:
            self._status(idle_summary(self.view, self.acted))

    @work(thread=True, exclusive=True, group="audit")
    def _audit(self, path: Path) -> None:
        """The policy's audit over its ``audit.period_days``, scope by scope, hourly."""
        from datetime import timedelta

        from gpuplan.core.audit.split import AuditRule
        from gpuplan.usecases.audit.live import aligned_window, audit_fleet
        from gpuplan.usecases.lifecycle.concurrency import DEFAULT_CONCURRENCY, Concurrency
        from gpuplan.usecases.lifecycle.survey import idle_rule

        now = self.context.clock()
        try:
            policy, adapters, problems = self._adapters(path)
            catalog = self.catalog
            if catalog is None:  # _adapters has loaded it; said for the type checker
                raise GpuplanError("the catalog could not be loaded")
            days = policy.audit.period_days
            start, end = aligned_window(now - timedelta(days=days), now, 60)

            def progress(index: int, total: int, scope: str) -> None:
                self.app.call_from_thread(self._progress, index, max(1, total))
                self.app.call_from_thread(self._status, f"Auditing {scope} ({index + 1}/{total})…")

            rule = AuditRule.from_idle(idle_rule(policy))
            found = audit_fleet(adapters, catalog, rule, policy.audit, start=start,
                                end=end, period_minutes=60, progress=progress,
                                concurrency=self.context.concurrency
                                or Concurrency(DEFAULT_CONCURRENCY))  # fmt: skip
        except GpuplanError as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        except Exception as exc:  # a bug must not kill the app: it goes to the ! panel
            self.app.call_from_thread(self._failed, describe(exc), exc)
            return
        result = AuditResult(policy.name, days, found.audits, [*problems, *found.problems],
                             found.skipped)  # fmt: skip
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_audit, path, result, len(adapters))

    def _show_audit(self, path: Path, result: AuditResult, scopes: int) -> None:
        self.shown["audit"] = path
        self._progress(scopes, max(1, scopes))
        self.query_one(AuditPane).show(result, self.filter_words(), self._table_width())
        self._status(result.summary())
        for problem in result.problems:
            self._problem("audit", problem)

    @work(thread=True, exclusive=True, group="fleet")
    def _survey(self, path: Path) -> None:
        """Load policy and catalog, build adapters, survey each scope; report as we go."""
        from gpuplan.core.lifecycle.idle import period_starts
        from gpuplan.usecases.lifecycle.concurrency import DEFAULT_CONCURRENCY, Concurrency
        from gpuplan.usecases.lifecycle.survey import Survey, idle_rule, stranded_gpus, survey

        now = self.context.clock()
        try:
            policy, adapters, problems = self._adapters(path)
        except GpuplanError as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        except Exception as exc:  # a bug or an unreadable file: the ! panel, not a crash
            self.app.call_from_thread(self._failed, describe(exc), exc)
            return
        view = FleetView(policy, problems=list(problems), now=now)
        rule = idle_rule(policy)
        window = max(1, rule.window_minutes // rule.period_minutes)
        periods = period_starts(rule, now)[-window:]  # the sparkline shows the window
        self.app.call_from_thread(self._progress, 0, max(1, len(adapters)))
        done = 0

        def read(adapter: CloudAdapter, part: Survey) -> None:
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
        judged = survey(adapters, rule, now, concurrency=pool, on_scope=read)
        view.seen[:] = judged.seen  # judged across every scope (metric faults)
        view.stranded = stranded_gpus(adapters)  # Kubernetes nodes' GPUs no pod requests
        if not get_current_worker().is_cancelled:  # a newer refresh replaced this one
            self.app.call_from_thread(self._show_survey, path, view)

    def _adapters(self, path: Path) -> tuple[Policy, list[CloudAdapter], list[str]]:
        policy, self.catalog, adapters, problems = load_adapters(self.context, path, self.catalog)
        return policy, adapters, problems

    def _progress(self, done: int, total: int) -> None:
        """The bar while reading; once done it gives its 30 columns back to the status
        line (at 80 columns the audit's dollars at stake were cut)."""
        bar = self.query_one("#progress", ProgressBar)
        bar.update(total=total, progress=done)
        bar.display = done < total

    def _show_survey(self, path: Path, view: FleetView) -> None:
        self.shown["idle"] = path
        self._show(view)

    def _show(self, view: FleetView) -> None:
        self.view = view
        for seen in view.seen:  # the cloud now agrees the action happened: drop the note
            if seen.instance.state is not InstanceState.RUNNING:
                self.acted.pop(seen.instance.instance_id, None)
        self._draw()
        self._status(idle_summary(view, self.acted))
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
        words = self.filter_words()
        self.rows = [s for s in seen if all(w in row_text(s) for w in words)]
        if self.sort is not None:
            self.rows = sort_rows(self.rows, *self.sort)
        rows = []
        for s in self.rows:
            key = s.instance.instance_id
            series = self.view.series.get(key, []) if self.view else []
            cells = instance_row(s, series, self.acted.get(key))
            rows.append(dict(zip((k for k, _ in COLUMNS), cells, strict=True)))
        workloads = any(is_workload(s.instance) for s in seen)
        layout = fit_columns(rows, self._table_width(), workloads)
        for key, width in layout.items():
            here = self.sort is not None and self.sort[0] == key
            label = header(dict(COLUMNS)[key], here, bool(self.sort and self.sort[1]), width)
            table.add_column(label, key=key, width=width)
        for s, row in zip(self.rows, rows, strict=True):
            cells = [cut(row[key], width) for key, width in layout.items()]
            table.add_row(*cells, key=s.instance.instance_id)
        self._detail(self.rows[0] if self.rows else None)
        spare = self.query_one("#stranded", Static)
        lines = stranded_text(self.view.stranded if self.view else [])
        spare.update(lines)
        spare.display = bool(lines.plain)

    def filter_words(self) -> list[str]:
        return self.query_one("#filter", Input).value.lower().split()

    def _table_width(self) -> int:
        return max(20, self.app.size.width - 3)

    def on_resize(self) -> None:
        if self.view is not None:
            self._draw()
        pane = self.query_one(AuditPane)
        if pane.result is not None:
            pane.draw(self.filter_words(), self._table_width())

    def on_input_changed(self, event: Input.Changed) -> None:
        self._draw()
        pane = self.query_one(AuditPane)
        if pane.result is not None:
            pane.draw(self.filter_words(), self._table_width())

    def action_leave_field(self, submit: bool) -> None:
        self.action_to_table()  # the filter applies as it is typed

    def action_filter(self) -> None:
        focus_now(self.query_one("#filter", Input))

    def action_to_table(self) -> None:
        table = self.query_one(AuditPane).table if self.auditing else self.query_one("#instances")
        focus_now(table)

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        key = str(event.column_key.value)
        same = self.sort is not None and self.sort[0] == key
        self.sort = (key, not self.sort[1]) if same and self.sort else (key, False)
        self._draw()
        if self.view is not None:
            arrow = "▼" if self.sort[1] else "▲"
            self._status(f"{idle_summary(self.view)} · sort: {dict(COLUMNS)[key]}{arrow}")

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
