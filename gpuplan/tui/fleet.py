"""Fleet screen: a policy's GPU instances, their utilisation and idle verdicts; stop one.

Surveying is :func:`gpuplan.usecases.fleet.survey`, one scope at a time in a worker
thread so progress shows and the screen never freezes. Stopping is
:func:`gpuplan.usecases.stop_idle.run_stop_idle` on the chosen instance only: first as
a dry run to show the plan, then, once confirmed, for real in LIVE mode (or recorded
as a dry run in DRY RUN mode), under the same lock and into the same ledger as
``gpuplan stop-idle``. Provider failures are notifications, never crashes.
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
from textual.widgets import DataTable, Footer, Header, Label, ProgressBar, Select, Static
from textual.worker import get_current_worker

from gpuplan.core.errors import GpuplanError
from gpuplan.core.idle import IdleVerdict
from gpuplan.tui import format as fmt
from gpuplan.tui.bars import sparkline
from gpuplan.tui.confirm import ConfirmScreen
from gpuplan.tui.context import TuiContext
from gpuplan.tui.fleet_scope import busiest_per_period
from gpuplan.tui.policies import check_file, find_policy_files

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
        Binding("x", "stop", "Stop"),
        Binding("l", "toggle_live", "Live/Dry run"),
    ]

    DEFAULT_CSS = """
    FleetScreen #bar { height: 1; }
    FleetScreen #bar Label { width: 8; padding: 0 1; }
    FleetScreen #policy { width: 1fr; }
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

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="bar"):
            yield Label("policy")
            yield Select[str]([], prompt="no valid policy", id="policy", compact=True)
            yield Static("DRY RUN", id="mode", classes="dry")
        with Horizontal(id="progress-row"):
            yield Static("", id="status")
            yield ProgressBar(id="progress", show_eta=False)
        table: DataTable[str | Text] = DataTable(id="instances", cursor_type="row")
        yield table
        yield Static("", id="detail")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "Fleet"
        table = self.query_one("#instances", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
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
        for index, adapter in enumerate(adapters, start=1):
            self.app.call_from_thread(
                self._status, f"Reading {adapter.scope} ({index}/{len(adapters)})…"
            )
            part: Survey = survey([adapter], rule, now)
            view.seen.extend(part.seen)
            view.problems.extend(part.problems)
            view.notices.extend(part.notices)
            for seen in part.seen:
                view.series[seen.instance.instance_id] = busiest_per_period(seen.samples, periods)
            self.app.call_from_thread(self._progress, index, max(1, len(adapters)))
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

    def _failed(self, message: str) -> None:
        self._status(message)
        self.notify(message, title="fleet", severity="error")

    def _show(self, view: FleetView) -> None:
        self.view = view
        table = self.query_one("#instances", DataTable)
        table.clear()
        for seen in view.seen:
            key = seen.instance.instance_id
            table.add_row(*instance_row(seen, view.series.get(key, [])), key=key)
        idle = sum(1 for s in view.seen if s.decision.verdict is IdleVerdict.IDLE)
        self._status(
            f"{view.policy.name}: {len(view.seen)} instance(s), {idle} idle"
            + (f", {len(view.problems)} problem(s)" if view.problems else "")
        )
        for problem in view.problems:
            self.notify(problem, title="provider", severity="error", timeout=10)
        for notice in view.notices:
            self.notify(notice, title="provider", severity="warning")
        self._detail(view.seen[0] if view.seen else None)

    def _status(self, text: str) -> None:
        self.query_one("#status", Static).update(Text(text))

    # --- selection ---------------------------------------------------------------

    def selected(self) -> Seen | None:
        if self.view is None or not self.view.seen:
            return None
        table = self.query_one("#instances", DataTable)
        row = table.cursor_row
        return self.view.seen[row] if 0 <= row < len(self.view.seen) else None

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
        self.app.call_from_thread(self._stopped, result)

    @staticmethod
    def _notifier(policy: Policy) -> Notifier | None:
        """The policy's webhook, as ``gpuplan stop-idle`` uses it (sent for live runs only)."""
        from gpuplan.providers.webhook import notifier_for

        return notifier_for(policy.notify)

    def _stopped(self, result: StopIdleResult) -> None:
        from gpuplan.tui.fleet_text import outcome_message

        message, failed = outcome_message(result)
        self.notify(message, title="stop", severity="error" if failed else "information")
        self._status(message)
        self.action_refresh()


def instance_row(seen: Seen, series: list[float | None]) -> list[str | Text]:
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
        inst.state.value,
        inst.instance_type,
        inst.region,
    ]


def _percent(value: float | None) -> str:
    """GPU memory or CPU over the window; a dash when the source does not report it."""
    return fmt.MISSING if value is None else f"{value:.0f}%"
