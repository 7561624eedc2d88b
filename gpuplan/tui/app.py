"""The gpuplan Textual app: four screens (modes) over the use-case layer.

Catalog opens first and needs nothing but the bundled data. The other screens are
imported when first shown, so start-up loads neither the planner, the policy stack nor
any cloud SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.screen import Screen

from gpuplan.tui.context import TuiContext
from gpuplan.tui.help import HelpScreen

SCREEN_TITLES = {
    "catalog": "Catalog",
    "estimate": "Estimate",
    "fleet": "Fleet",
    "policies": "Policies",
}


class GpuplanApp(App[None]):
    """Catalog, Estimate, Fleet and Policies screens, switched with 1-4."""

    TITLE = "gpuplan"
    ENABLE_COMMAND_PALETTE = False

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "show('catalog')", "Catalog"),
        Binding("2", "show('estimate')", "Estimate"),
        Binding("3", "show('fleet')", "Fleet"),
        Binding("4", "show('policies')", "Policies"),
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, context: TuiContext | None = None, *, start: str = "catalog") -> None:
        super().__init__()
        self.context = context or TuiContext()
        self._start = start
        for mode in SCREEN_TITLES:
            self.add_mode(mode, self._screen_factory(mode))

    def _screen_factory(self, mode: str) -> Callable[[], Screen[None]]:
        def build() -> Screen[None]:
            return build_screen(mode, self.context)

        return build

    def on_mount(self) -> None:
        self.switch_mode(self._start)

    def action_show(self, mode: str) -> None:
        if self.current_mode != mode:
            self.switch_mode(mode)

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())


def run_tui(
    *,
    catalog_dir: str | None = None,
    policies_dir: Path = Path("policies"),
    policy_file: Path | None = None,
    ledger_path: Path | None = None,
) -> int:
    """Run the app in this terminal until the person quits; the CLI's only entry point."""
    context = TuiContext(
        catalog_dir=catalog_dir,
        policies_dir=policies_dir,
        policy_file=policy_file,
        ledger_path=ledger_path,
    )
    GpuplanApp(context, start="policies" if policy_file else "catalog").run()
    return 0


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
