"""A yes/no modal that shows what is about to happen before it happens."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ConfirmScreen(ModalScreen[bool]):
    """Title, the plan as text, and two buttons; ``y`` confirms, ``n`` or escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 84; max-width: 100%; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 0 1;
    }
    ConfirmScreen #title { text-style: bold; margin-bottom: 1; }
    ConfirmScreen #buttons { height: 3; align: right middle; margin-top: 1; }
    ConfirmScreen Button { margin-left: 2; }
    """

    def __init__(self, title: str, body: Text | str, *, confirm_label: str = "Yes (y)") -> None:
        super().__init__()
        self._title = title
        self._body = body
        self._confirm_label = confirm_label

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._title, id="title")
            yield Static(self._body, id="body")
            with Horizontal(id="buttons"):
                yield Button("No (n)", id="no")
                yield Button(self._confirm_label, id="yes", variant="error")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
