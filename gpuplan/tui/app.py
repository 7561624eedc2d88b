"""The gpuplan Textual app: four screens (modes) over the use-case layer.

Catalog opens first and needs nothing but the bundled data. The other screens are
imported when first shown, so start-up loads neither the planner, the policy stack nor
any cloud SDK. Failures never reach the screen as a traceback: workers report them to
:meth:`GpuplanApp.report_problem` (the ``!`` panel), and should the app itself stop on
a bug it exits non-zero with one line and the traceback saved to a private file
(:mod:`gpuplan.tui.crash`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen, Screen

from gpuplan.tui.context import TuiContext
from gpuplan.tui.help import HelpScreen, TooSmallScreen
from gpuplan.tui.keys import command, typing
from gpuplan.tui.problems import Problem, ProblemsScreen, describe
from gpuplan.usecases.clouds.entries import register_facts

if TYPE_CHECKING:
    from gpuplan.usecases.lifecycle.concurrency import Concurrency

SCREEN_TITLES = {
    "catalog": "Catalog",
    "estimate": "Estimate",
    "fleet": "Fleet",
    "policies": "Policies",
}
SCREENS = Binding.Group("Screens", compact=True)
MIN_SIZE = (60, 16)
"""Below this many columns x rows the screens cannot show a useful table."""
GLOBAL_COMMANDS = frozenset({"show", "help", "problems", "quit_app"})
"""Actions of the global plain keys: off in a text field (``ctrl+q`` quits from there)."""


class GpuplanApp(App[None]):
    """Catalog, Estimate, Fleet and Policies screens, switched with 1-4."""

    TITLE = "gpuplan"
    ENABLE_COMMAND_PALETTE = False

    BINDINGS: ClassVar[list[BindingType]] = [
        # Commands (gpuplan.tui.keys): resolved as each key arrives, off while typing.
        # One footer entry ("1234 Screens"), the footer's last (the app's bindings follow
        # the screen's): at 80 columns it is the one cut, never "? Help" or "q Quit".
        command("1", "show('catalog')", "Catalog", group=SCREENS),
        command("2", "show('estimate')", "Estimate", group=SCREENS),
        command("3", "show('fleet')", "Fleet", group=SCREENS),
        command("4", "show('policies')", "Policies", group=SCREENS),
        # ? ! q: every screen's own first bindings (gpuplan.tui.keys.GLOBAL_KEYS).
        # F1 is no text: it opens the help from a field too (``?`` there is text).
        Binding("f1", "help_key", "Help", show=False, priority=True),
        # Priority: the focus moves before the next key is routed, so keys typed right
        # after tab land in the new field even when they arrive in one burst (a slow
        # redraw queues them); as ordinary bindings they resolve after the old field
        # has already been handed the next keys.
        Binding("tab", "app.focus_next", "Next field", show=False, priority=True),
        Binding("shift+tab", "app.focus_previous", "Previous field", show=False, priority=True),
    ]

    def __init__(self, context: TuiContext | None = None, *, start: str = "catalog") -> None:
        super().__init__()
        register_facts()  # every listed cloud's facts before any screen reads the catalog
        self.context = context or TuiContext()
        self._start = start
        self.problems: list[Problem] = []
        for mode in SCREEN_TITLES:
            self.add_mode(mode, self._screen_factory(mode))

    def _screen_factory(self, mode: str) -> Callable[[], Screen[None]]:
        def build() -> Screen[None]:
            return build_screen(mode, self.context)

        return build

    def on_mount(self) -> None:
        self.switch_mode(self._start)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The global keys are text in a field, and a dialog's own keys while it is up."""
        if action in GLOBAL_COMMANDS and (
            typing(self.screen) or isinstance(self.screen, ModalScreen)
        ):
            return None
        return True

    async def action_quit_app(self) -> None:
        """``q``: as Textual's ``ctrl+q`` (``quit``), which stays on in text fields."""
        await self.action_quit()

    def action_show(self, mode: str) -> None:
        if self.current_mode != mode:
            self.switch_mode(mode)

    def action_help_key(self) -> None:
        """``F1``: the help, from anywhere but a dialog (in the help it closes it)."""
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss(None)
        elif not isinstance(self.screen, ModalScreen):
            self.action_help()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.current_mode))

    def action_problems(self) -> None:
        if not isinstance(self.screen, ProblemsScreen):
            self.push_screen(ProblemsScreen(self.problems))

    def report_problem(self, source: str, problem: BaseException | str) -> None:
        """Keep a problem for the ``!`` panel and say so briefly (main thread only)."""
        from gpuplan.core.errors import GpuplanError

        text = problem if isinstance(problem, str) else describe(problem)
        unexpected = isinstance(problem, BaseException) and not isinstance(problem, GpuplanError)
        self.problems.append(Problem(self.context.clock(), source, text, unexpected))
        del self.problems[:-200]
        self.notify(f"{text[:160]}\n(! lists every problem)", title=source, severity="error")

    def on_resize(self, event: events.Resize) -> None:
        small = event.size.width < MIN_SIZE[0] or event.size.height < MIN_SIZE[1]
        showing = isinstance(self.screen, TooSmallScreen)
        if small and not showing:
            self.push_screen(TooSmallScreen(MIN_SIZE))
        elif not small and showing:
            self.pop_screen()

    def _handle_exception(self, error: Exception) -> None:
        """A bug escaped a screen: save the traceback, exit 1 with one line, no dump."""
        self._return_code = 1
        if self._exception is None:  # what run_test re-raises for test frameworks
            self._exception = error
            self._exception_event.set()
        saved = ""
        try:
            import traceback

            from gpuplan.tui.crash import save_crash

            path = save_crash("".join(traceback.format_exception(error)))
            saved = f" (traceback saved in {path})"
        except OSError:
            pass
        line = f"gpuplan: error: the TUI stopped: {describe(error)}{saved}"
        self.exit(return_code=1, message=line)


def run_tui(
    *,
    catalog_dir: str | None = None,
    policies_dir: Path = Path("policies"),
    policy_file: Path | None = None,
    ledger_path: Path | None = None,
    concurrency: Concurrency | None = None,
) -> int:
    """Run the app in this terminal until the person quits; the CLI's only entry point."""
    context = TuiContext(
        catalog_dir=catalog_dir,
        policies_dir=policies_dir,
        policy_file=policy_file,
        ledger_path=ledger_path,
        concurrency=concurrency,
    )
    app = GpuplanApp(context, start="policies" if policy_file else "catalog")
    app.run()
    return app.return_code or 0


def build_screen(mode: str, context: TuiContext) -> Screen[None]:
    """The screen for ``mode``; its module is imported only now (lazy start-up)."""
    if mode == "catalog":
        from gpuplan.tui.catalog import CatalogScreen

        return CatalogScreen(context)
    if mode == "estimate":
        from gpuplan.tui.estimate import EstimateScreen

        return EstimateScreen(context)
    if mode == "fleet":
        from gpuplan.tui.fleet import FleetScreen

        return FleetScreen(context)
    if mode == "policies":
        from gpuplan.tui.policies import PoliciesScreen

        return PoliciesScreen(context)
    raise ValueError(f"unknown screen {mode!r}")
