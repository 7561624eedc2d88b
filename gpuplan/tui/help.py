"""The ``?`` help screen: every key binding, per screen, in one modal."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP_TEXT = """\
# gpuplan keys

| key | where | what |
|---|---|---|
| `1` `2` `3` `4` | anywhere | Catalog, Estimate, Fleet, Policies |
| `?` | anywhere | this help |
| `q` | anywhere | quit (`ctrl+q` from a text field) |
| `/` | Catalog | jump to the filter bar |
| `escape` | filter bar, form | back to the table |
| `tab` / `shift+tab` | anywhere | next / previous field |
| `s` | Catalog | cycle the sort: price, $/GPU-h, TFLOP/s per $ |
| `enter` / `ctrl+r` | Estimate | run the estimate (enter on a row: its arithmetic) |
| `t` | Estimate | switch between the chart and the explanation |
| `r` | Fleet, Policies | refresh (Fleet: in the background) / re-check the files |
| `x` | Fleet | stop the selected idle instance (plan first, then confirm) |
| `l` | Fleet | switch DRY RUN / LIVE |
| `y` / `n` | confirmation | confirm / cancel |

Arrow keys move in tables; the row under the cursor fills the detail panel.
The mouse works too: click a column header to sort, a row to select.
"""


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

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(HELP_TEXT)

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
