"""Policies screen: policy files found on disk, each checked, with inline errors and budget.

Checking is :func:`gpuplan.usecases.policy.load_policy`; the month's spend is the last
snapshot ``gpuplan budget`` recorded in the ledger (no cloud call from this screen).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Footer, Header, Input, Static

from gpuplan.core.errors import DataError, GpuplanError
from gpuplan.core.policy import Policy
from gpuplan.tui.bars import budget_bar
from gpuplan.tui.context import TuiContext
from gpuplan.tui.keys import LEAVE_FIELD, RoutedScreen, command, focus_now
from gpuplan.tui.table import FieldInput, NavTable

POLICY_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class PolicyView:
    """One file as the screen shows it: the policy, or its problems with their lines."""

    path: Path
    policy: Policy | None
    problems: tuple[DataError | GpuplanError, ...]


def find_policy_files(directory: Path, extra: Path | None = None) -> list[Path]:
    """``*.yaml`` / ``*.yml`` directly under ``directory``, sorted, then ``extra``; OSError
    when the folder cannot be read (the screens say so)."""
    found = (
        sorted(p for p in directory.iterdir() if p.suffix in POLICY_SUFFIXES and p.is_file())
        if directory.is_dir()
        else []
    )
    if extra is not None and extra not in found:
        found.append(extra)
    return found


def check_file(path: Path, catalog_dir: str | None) -> PolicyView:
    """The use case's verdict on one file, keeping each problem's line number."""
    from gpuplan.loaders.policy_file import PolicyFileError
    from gpuplan.usecases.policy import gpu_table, load_policy

    try:
        policy = load_policy(path, gpus=gpu_table(catalog_dir))
    except PolicyFileError as exc:
        return PolicyView(path, None, tuple(exc.problems))
    except GpuplanError as exc:
        return PolicyView(path, None, (exc,))
    return PolicyView(path, policy, ())


def annotated_source(path: Path, problems: tuple[DataError | GpuplanError, ...]) -> Text:
    """The file with line numbers; each problem printed in red under its line."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    by_line: dict[int, list[DataError]] = {}
    for problem in problems:
        if isinstance(problem, DataError) and problem.line is not None:
            by_line.setdefault(problem.line, []).append(problem)
    out = Text(no_wrap=True, overflow="ellipsis")
    for number, line in enumerate(lines, start=1):
        out.append(f"{number:4} │ ", style="dim")
        out.append(line + "\n", style="bold" if number in by_line else "")
        for problem in by_line.get(number, []):
            column = (problem.column or 1) - 1
            field = f"{problem.field}: " if problem.field else ""
            out.append("     │ " + " " * column + "^ ", style="red")
            out.append(f"{field}{problem.detail}\n", style="red")
    return out


def problem_line(problem: DataError | GpuplanError) -> str:
    """A problem without its (long) file path: ``line 7, column 3: idle.x: ...``."""
    if not isinstance(problem, DataError):
        return str(problem)
    where = f"line {problem.line}" if problem.line is not None else "file"
    if problem.line is not None and problem.column is not None:
        where += f", column {problem.column}"
    field = f"{problem.field}: " if problem.field else ""
    return f"{where}: {field}{problem.detail}"


class PoliciesScreen(RoutedScreen):
    """Files on the left; the selected one's verdict, budget burn and source on the right."""

    BINDINGS: ClassVar[list[BindingType]] = [
        command("r", "rescan", "Re-check"),
        command("slash", "filter", "Filter"),
        Binding("escape", "to_table", "Files", show=False),
        *LEAVE_FIELD,
    ]

    DEFAULT_CSS = """
    PoliciesScreen #left { width: 30; height: 1fr; border-right: solid $primary; }
    PoliciesScreen #files { height: 1fr; }
    PoliciesScreen #filter { height: 1; }
    PoliciesScreen #filter:focus { background: $accent 40%; }
    PoliciesScreen #right { width: 1fr; padding: 0 1; }
    PoliciesScreen #verdict { margin-bottom: 1; }
    PoliciesScreen #budget { margin-bottom: 1; }
    """

    def __init__(self, context: TuiContext) -> None:
        super().__init__()
        self.context = context
        self.views: dict[str, PolicyView] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal():
            with Vertical(id="left"):
                yield FieldInput(placeholder="/ filter files", id="filter", compact=True)
                yield NavTable(id="files", cursor_type="row")
            with VerticalScroll(id="right"):
                yield Static(id="verdict")
                yield Static(id="budget")
                yield Static(id="source")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "Policies"
        table = self.query_one("#files", DataTable)
        table.add_columns("", "policy file")
        self.action_rescan()
        table.focus()

    def action_rescan(self) -> None:
        self.views = {}
        try:
            found = find_policy_files(self.context.policies_dir, self.context.policy_file)
        except OSError as exc:  # a folder that cannot be read: said, not a crash
            self._draw()
            self.query_one("#verdict", Static).update(
                Text(f"{self.context.policies_dir}: {exc.strerror or exc}", style="bold red")
            )
            return
        for path in found:
            self.views[str(path)] = check_file(path, self.context.catalog_dir)
        self._draw()

    def _draw(self) -> None:
        """The files whose name holds every word of the filter, the chosen one shown."""
        table = self.query_one("#files", DataTable)
        table.clear()
        words = self.query_one("#filter", Input).value.lower().split()
        shown = [k for k, v in self.views.items() if all(w in v.path.name.lower() for w in words)]
        for key in shown:
            view = self.views[key]
            mark = Text("✓", style="green") if view.policy else Text("✗", style="red")
            table.add_row(mark, view.path.name, key=key)
        if not shown:
            self._show(None)
            return
        wanted = str(self.context.policy_file) if self.context.policy_file else None
        first = wanted if wanted in shown else shown[0]
        table.move_cursor(row=table.get_row_index(first))
        self._show(self.views[first])

    def on_input_changed(self, event: Input.Changed) -> None:
        self._draw()

    def action_filter(self) -> None:
        focus_now(self.query_one("#filter", Input))

    def action_to_table(self) -> None:
        focus_now(self.query_one("#files", DataTable))

    def action_leave_field(self, submit: bool) -> None:
        self.action_to_table()  # the filter applies as it is typed

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show(self.views.get(str(event.row_key.value)))

    def _show(self, view: PolicyView | None) -> None:
        verdict = self.query_one("#verdict", Static)
        budget = self.query_one("#budget", Static)
        source = self.query_one("#source", Static)
        if view is None and self.views:
            verdict.update("No policy file matches the filter (/).")
            budget.update("")
            source.update("")
            return
        if view is None:
            verdict.update(
                f"No policy files (*.yaml) in {self.context.policies_dir}; "
                "start one with 'gpuplan policy init' or pass --policies DIR."
            )
            budget.update("")
            source.update("")
            return
        source.update(annotated_source(view.path, view.problems))
        if view.policy is None:
            count = len(view.problems)
            noun = "problem" if count == 1 else "problems"
            verdict.update(Text(f"{view.path.name}: {count} {noun}", style="bold red"))
            budget.update(Text("\n".join(problem_line(p) for p in view.problems), style="red"))
            return
        verdict.update(Text(f"{view.policy.name} · valid · {view.path.name}", style="bold green"))
        budget.update(self._budget(view.policy))

    def _budget(self, policy: Policy) -> Text:
        """The month's recorded spend against the budget, from the ledger only."""
        from gpuplan.core.audit.budget import month_key
        from gpuplan.ledger import Ledger, ledger_path
        from gpuplan.usecases.policy import remaining_monthly_budget

        now = self.context.clock()
        thresholds = list(policy.budget.alert_at_percent)
        try:
            ledger = Ledger(self.context.ledger_path or ledger_path())
        except GpuplanError as exc:
            return Text(f"ledger: {exc}", style="red")
        try:
            left, how = remaining_monthly_budget(policy, ledger, now)
            last = ledger.last_spend(policy.name, month_key(now))
        finally:
            ledger.close()
        monthly = policy.budget.monthly_usd
        out = Text()
        out.append(f"Budget {month_key(now)}: ", style="bold")
        if monthly is None:
            out.append(how)
            return out
        spent = last.month_to_date_usd if last else None
        out.append(f"${spent or 0:,.2f} of ${monthly:,.2f}; alerts at ")
        out.append(", ".join(f"{t:g}%" for t in thresholds) + "\n")
        if spent is not None:
            out.append_text(budget_bar(spent, monthly, thresholds))
            out.append("\n")
        out.append(f"left: ${left:,.2f} ({how})" if left is not None else how, style="dim")
        return out
