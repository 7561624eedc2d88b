"""The ``?`` help screen (keys of the screen you are on, then the global ones) and the
"terminal too small" notice."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


@dataclass(frozen=True)
class HelpRow:
    """One line of a screen's help: the keys as shown, what they do, the keys promised."""

    shown: str
    what: str
    keys: tuple[str, ...]
    """Textual key names this line promises (tests press each one on its screen)."""


TABLE_ROWS = (
    HelpRow("`↑` `↓` / `j` `k`", "move the cursor", ("down", "up", "j", "k")),
    HelpRow("`g` `G` / `Home` `End`", "first / last row", ("G", "g", "end", "home")),
    HelpRow("click a header", "sort by it (▲); click again to reverse (▼)", ()),
)
TAB = HelpRow("`tab` / `shift+tab`", "next / previous field", ("tab", "shift+tab"))
SCREEN_KEYS: dict[str, tuple[HelpRow, ...]] = {
    "catalog": (
        HelpRow("`/`", "jump to the search box (filters as you type)", ("slash",)),
        replace(TAB, what="next / previous filter box (provider, GPU, region, pricing)"),
        HelpRow("`enter`, `escape`", "back to the table", ("enter", "escape")),
        HelpRow("`s`", "sort by on-demand, spot, $/GPU-h, TFLOP/s per $ in turn", ("s",)),
        *TABLE_ROWS,
    ),
    "estimate": (
        HelpRow(
            "`enter` / `ctrl+r`",
            "run the estimate (on a row: its arithmetic)",
            ("enter", "ctrl+r"),
        ),
        TAB,
        HelpRow("`t`", "switch between the chart and the explanation", ("t",)),
        HelpRow("`f`", "hide / show the form (below 110 columns it hides for results)", ("f",)),
        HelpRow("`/`", "filter the options (GPU, instance, cloud, region, pricing)", ("slash",)),
        HelpRow("`escape`", "back to the table", ("escape",)),
        *TABLE_ROWS,
    ),
    "fleet": (
        HelpRow("`r`", "refresh in the background", ("r",)),
        HelpRow("`/`", "filter rows (instance, type, region, verdict)", ("slash",)),
        HelpRow("`x`", "stop the selected idle instance (plan first, then confirm)", ("x",)),
        HelpRow("`l`", "switch DRY RUN / LIVE", ("l",)),
        HelpRow("`y` / `n`", "confirm / cancel in the dialog", ("y", "n")),
        HelpRow("`a`", "switch between the idle view and the audit view", ("a",)),
        *TABLE_ROWS,
    ),
    "policies": (
        HelpRow("`r`", "re-check the files", ("r",)),
        HelpRow("`/`", "filter the file list by name", ("slash",)),
        HelpRow("`enter`, `escape`", "back to the file list", ("enter", "escape")),
        *TABLE_ROWS[:2],
    ),
}
"""Each screen's keys: the help screen is drawn from these, and tests press every key."""
GLOBAL_KEYS = (
    HelpRow("`1` `2` `3` `4`", "Catalog, Estimate, Fleet, Policies", ("1", "2", "3", "4")),
    HelpRow("`?` / `F1`", "this help (`F1` from a text field too)", ("question_mark", "f1")),
    HelpRow("`!`", "problems so far (failed providers, webhooks, stops)", ("exclamation_mark",)),
    HelpRow("`q`", "quit (`ctrl+q` from a text field)", ("q", "ctrl+q")),
)
"""Keys that work on every screen (and are listed under each screen's own)."""
SCREEN_NOTES = {
    "catalog": """
The region box takes names (`us-east-1`) and groups (`europe`, `us`, `asia`...).
Narrow columns are dropped by priority: prices and region stay, the instance name goes
first; the detail panel below always names the selected instance.
""",
    "estimate": """
Numbers take suffixes: params `7B`, tokens `2T`, budget `20k`. The deadline needs a
unit: `36h`, `14d`, `2w`. A bad field is marked red and named in the status line; the
old results are cleared. The policy field takes a path or a file name in the policies
folder (`--policies`). Method: `pretrain`, `full` (full fine-tuning), `lora` or `qlora`
(adapters on a frozen base; LoRA rank 16 unless given). When nothing is feasible the
chart gives each reason once, with how many options it left out.
""",
    "fleet": """
**Audit view** (`a`): the policy's instances over its `audit.period_days` (7 by default),
sorted by dollars at stake per month. Each bar is the dollars paid: busy (green, work
weighted by utilisation), waiting (yellow, a live process while GPUs wait), idle (red,
nothing ran), unknown (grey, no metrics); `▒` marks the oversized share of the running
time (what the cheapest fitting offer would have saved). Below: the selected row's
figures and its advice with the evidence. `r` re-reads the audit; stops are made from
the idle view.
""",
}
TITLES = {"catalog": "Catalog", "estimate": "Estimate", "fleet": "Fleet", "policies": "Policies"}


def key_table(title: str, rows: tuple[HelpRow, ...]) -> str:
    """A Markdown table of keys under a heading."""
    lines = [f"## {title}", "", "| key | what |", "|---|---|"]
    lines += [f"| {row.shown} | {row.what} |" for row in rows]
    return "\n".join(lines) + "\n"


def help_text(mode: str) -> str:
    """This screen's keys first, then the keys that work everywhere."""
    own = key_table(TITLES[mode], SCREEN_KEYS[mode]) if mode in SCREEN_KEYS else ""
    return own + SCREEN_NOTES.get(mode, "") + "\n" + key_table("Everywhere", GLOBAL_KEYS)


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
        from textual.widgets import Markdown  # markdown-it: loaded when help is first shown

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
