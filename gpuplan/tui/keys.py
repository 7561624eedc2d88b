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

from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input


def command(
    key: str,
    action: str,
    description: str,
    *,
    show: bool = True,
    group: Binding.Group | None = None,
) -> Binding:
    """A screen command on a plain key: routed as it arrives, off while typing."""
    return Binding(key, action, description, show=show, priority=True, group=group)


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


GLOBAL_KEYS = (
    command("question_mark", "app.help", "Help"),
    command("exclamation_mark", "app.problems", "Problems"),
    command("q", "app.quit_app", "Quit"),
)
"""The app's keys every screen shows first in its footer (bindings of a base class come
before a subclass's), so a narrow terminal cuts a screen key, never help or quit. The
app turns them off while typing (:meth:`GpuplanApp.check_action`)."""


class RoutedScreen(Screen[None]):
    """A screen whose :func:`command` bindings never fire while the focused widget takes
    text, and whose :data:`LEAVE_FIELD` bindings fire only in a text field."""

    BINDINGS: ClassVar[list[BindingType]] = [
        *GLOBAL_KEYS,
        # Shown in the footer while typing only, where ? and q are text: the app's own
        # f1 and ctrl+q (priority, resolved first) do the work everywhere.
        Binding("f1", "field_key('help')", "Help", priority=True),
        Binding("ctrl+q", "field_key('quit')", "Quit", priority=True),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "field_key":
            return typing(self)  # False: neither shown nor run (the app's key runs)
        if action == "leave_field":
            return True if in_field(self) else None
        if typing(self) and action in self._commands():
            return None  # not handled (dimmed in the footer): the key goes to the field
        return True

    def action_leave_field(self, submit: bool) -> None:
        """``enter`` (``submit``) or ``escape`` in a text field; each screen says what."""

    async def action_field_key(self, what: str) -> None:
        """F1 or ctrl+q while typing, should the app's own binding not have taken it."""
        await self.app.run_action("help_key" if what == "help" else "quit")

    @classmethod
    def _commands(cls) -> frozenset[str]:
        return frozenset(b.action for b in cls.BINDINGS if isinstance(b, Binding) and b.priority)
