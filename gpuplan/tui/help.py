"""The ``?`` help screen (keys of the screen you are on, then the global ones) and the
"terminal too small" notice."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

TABLE_KEYS = """\
| `↑` `↓` / `j` `k` | move the cursor |
| `g` `G` / `Home` `End` | first / last row |
| click a header | sort by it (▲); click again to reverse (▼) |
"""
SCREEN_HELP = {
    "catalog": """\
## Catalog

| key | what |
|---|---|
| `/` | jump to the search box (filters as you type) |
| `tab` / `shift+tab` | next / previous filter box (provider, GPU, region, pricing) |
| `enter`, `escape` | back to the table |
| `s` | sort by on-demand, spot, $/GPU-h, TFLOP/s per $ in turn |
"""
    + TABLE_KEYS
    + """
The region box takes names (`us-east-1`) and groups (`europe`, `us`, `asia`...).
Narrow columns are dropped by priority: prices and region stay, the instance name goes
first; the detail panel below always names the selected instance.
""",
    "estimate": """\
## Estimate

| key | what |
|---|---|
| `enter` / `ctrl+r` | run the estimate (on a row: its arithmetic) |
| `tab` / `shift+tab` | next / previous field |
| `t` | switch between the chart and the explanation |
| `f` | hide / show the form (below 110 columns it hides for results) |
| `escape` | back to the table |
"""
    + TABLE_KEYS
    + """
Numbers take suffixes: params `7B`, tokens `2T`, budget `20k`. The deadline needs a
unit: `36h`, `14d`, `2w`. A bad field is marked red and named in the status line; the
old results are cleared. The policy field takes a path or a file name in the policies
folder (`--policies`).
""",
    "fleet": """\
## Fleet

| key | what |
|---|---|
| `r` | refresh in the background |
| `/` | filter rows (instance, type, region, verdict) |
| `x` | stop the selected idle instance (plan first, then confirm) |
| `l` | switch DRY RUN / LIVE |
| `y` / `n` | confirm / cancel in the dialog |
| `a` | switch between the idle view and the audit view |
"""
    + TABLE_KEYS
    + """
**Audit view** (`a`): the policy's instances over its `audit.period_days` (7 by default),
sorted by dollars at stake per month. Each bar is the dollars paid: busy (green, work
weighted by utilisation), waiting (yellow, a live process while GPUs wait), idle (red,
nothing ran), unknown (grey, no metrics); `▒` marks the oversized share of the running
time (what the cheapest fitting offer would have saved). Below: the selected row's
figures and its advice with the evidence. `r` re-reads the audit; stops are made from
the idle view.
""",
    "policies": """\
## Policies

| key | what |
|---|---|
| `r` | re-check the files |
"""
    + TABLE_KEYS,
}
GLOBAL_HELP = """\
## Everywhere

| key | what |
|---|---|
| `1` `2` `3` `4` | Catalog, Estimate, Fleet, Policies |
| `?` | this help |
| `!` | problems so far (failed providers, webhooks, stops) |
| `q` | quit (`ctrl+q` from a text field) |
"""


def help_text(mode: str) -> str:
    """This screen's keys first, then the keys that work everywhere."""
    return SCREEN_HELP.get(mode, "") + "\n" + GLOBAL_HELP


class HelpScreen(ModalScreen[None]):
    """A modal listing the bindings; any of escape, q or ? closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark", "dismiss_help", "Close help"),
    ]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90; max-width: 100%; height: auto; max-height: 90%;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, mode: str = "catalog") -> None:
        super().__init__()
        self.mode = mode

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(help_text(self.mode))

    def action_dismiss_help(self) -> None:
        self.dismiss(None)


class TooSmallScreen(ModalScreen[None]):
    """Covers the app while the terminal is too small; gone when it is large enough."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "quit_app", "Quit")]

    DEFAULT_CSS = """
    TooSmallScreen { align: center middle; }
    TooSmallScreen Static { width: auto; text-style: bold; }
    """

    def __init__(self, minimum: tuple[int, int]) -> None:
        super().__init__()
        self.minimum = minimum

    def compose(self) -> ComposeResult:
        width, height = self.minimum
        yield Static(f"Terminal too small: gpuplan needs {width}x{height}.\nEnlarge it, or q.")

    def action_quit_app(self) -> None:
        """The ``q`` the notice offers (the app's own ``q`` is off while a dialog is up)."""
        self.app.exit()
