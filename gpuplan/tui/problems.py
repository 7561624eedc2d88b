"""Problems: every failure the TUI meets, kept in a list and shown in a panel (``!``).

Workers report here instead of raising: a provider without credentials, a failed
webhook, a stop that did not happen, or an unexpected bug in a screen. Nothing reaches
the screen as a traceback; the person reopens the list with ``!`` at any time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

MAX_KEPT = 200


@dataclass(frozen=True)
class Problem:
    """One failure: when, which part of the app, and what it said."""

    at: datetime
    source: str
    message: str
    unexpected: bool = False
    """A bug (not a GpuplanError): the message says what kind of exception it was."""


def describe(error: BaseException) -> str:
    """One line for an exception: the message, and the type when it is not ours."""
    from gpuplan.core.errors import GpuplanError

    if isinstance(error, GpuplanError):
        return str(error)
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text[:300]}" if text else type(error).__name__


def problems_text(problems: list[Problem]) -> Text:
    if not problems:
        return Text("No problems so far.", style="green")
    out = Text()
    for problem in reversed(problems):
        out.append(f"{problem.at:%H:%M:%S} ", style="dim")
        out.append(f"{problem.source}: ", style="bold")
        out.append(problem.message + "\n", style="red" if problem.unexpected else "")
    return out


class ProblemsScreen(ModalScreen[None]):
    """The problems so far, newest first; escape, q or ! closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,exclamation_mark", "close", "Close"),
    ]

    DEFAULT_CSS = """
    ProblemsScreen { align: center middle; }
    ProblemsScreen > VerticalScroll {
        width: 100; max-width: 100%; height: auto; max-height: 90%;
        border: thick $error; background: $surface; padding: 0 1;
    }
    ProblemsScreen #title { text-style: bold; }
    """

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__()
        self._problems = problems

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(f"Problems ({len(self._problems)}), newest first", id="title")
            yield Static(problems_text(self._problems), id="problems")
            yield Static("escape: close", classes="hint")

    def action_close(self) -> None:
        self.dismiss(None)
