"""Where a key goes: to the widget that shows the focus when the key arrives, always.

Textual resolves ordinary bindings only after a key has been handed to the focused
widget and bubbled back up, by when the next keys of a burst are already queued for that
widget; and ``Widget.focus()`` moves the focus only after the keys already queued. So
``/xlarge`` typed at full speed on the Fleet table ran ``x``, ``l`` and ``a`` as
commands, and a result that took the focus turned the next digit typed into a field
into a screen switch. Here, instead:

- a screen's single-key commands are *priority* bindings (:func:`command`): each is
  resolved as its key arrives, in order, against the focus at that moment;
- :meth:`RoutedScreen.check_action` turns them off while the focused widget takes
  printable keys as text (a text field, an open dropdown's type-to-search), and the key
  goes there;
- ``enter`` and ``escape`` in a text field are *field* bindings (:data:`LEAVE_FIELD`),
  resolved as they arrive too, and whatever moves the focus moves it at once
  (:func:`focus_now`), so the next key of the burst already finds the table.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input


def command(key: str, action: str, description: str, *, show: bool = True) -> Binding:
    """A screen command on a plain key: routed as it arrives, off while typing."""
    return Binding(key, action, description, show=show, priority=True)


LEAVE_FIELD = (
    Binding("enter", "leave_field(True)", "Submit", show=False, priority=True),
    Binding("escape", "leave_field(False)", "Table", show=False, priority=True),
)
"""In a text field only: ``enter`` submits it, ``escape`` does not; both then hand the
focus to the table (the Estimate form's ``enter`` runs the estimate instead)."""


def typing(screen: Screen[Any]) -> bool:
    """The focused widget takes printable keys as text (a text field, or an open
    dropdown's type-to-search): they are not commands."""
    focused = screen.focused
    return focused is not None and focused.check_consume_key("x", "x")


def in_field(screen: Screen[Any]) -> bool:
    """A text field has the focus (``enter`` and ``escape`` leave it for the table)."""
    return isinstance(screen.focused, Input)


def focus_now(widget: Widget) -> None:
    """Give ``widget`` the focus before the next key is routed (not after the queue)."""
    widget.screen.set_focus(widget)


class RoutedScreen(Screen[None]):
    """A screen whose :func:`command` bindings never fire while the focused widget takes
    text, and whose :data:`LEAVE_FIELD` bindings fire only in a text field."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave_field":
            return True if in_field(self) else None
        if typing(self) and action in self._commands():
            return None  # not handled (dimmed in the footer): the key goes to the field
        return True

    def action_leave_field(self, submit: bool) -> None:
        """``enter`` (``submit``) or ``escape`` in a text field; each screen says what."""

    @classmethod
    def _commands(cls) -> frozenset[str]:
        return frozenset(b.action for b in cls.BINDINGS if isinstance(b, Binding) and b.priority)
