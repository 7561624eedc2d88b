"""Every key the help screen promises works on that screen.

The cases are generated from the help's own tables (:data:`gpuplan.tui.help.SCREEN_KEYS`
and :data:`~gpuplan.tui.help.GLOBAL_KEYS`): a key added to the help without an entry in
:data:`EFFECTS` saying what it does fails here, and so does one whose handler is missing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, TabbedContent

from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.confirm import ConfirmScreen
from gpuplan.tui.context import TuiContext
from gpuplan.tui.estimate import EstimateScreen
from gpuplan.tui.fleet import FleetScreen
from gpuplan.tui.help import GLOBAL_KEYS, SCREEN_KEYS, HelpScreen
from gpuplan.tui.problems import ProblemsScreen
from tests.tui.conftest import VALID_POLICY, drive
from tests.tui.fleet_fake import LifecycleFake, demo_fleet
from tests.tui.test_fleet_screen import on_fake


@dataclass
class World:
    app: GpuplanApp
    pilot: Pilot[None]
    fake: LifecycleFake
    context: TuiContext


Effect = Callable[[World, str], Awaitable[None]]
TABLES = {"catalog": "#offers", "estimate": "#options", "fleet": "#instances", "policies": "#files"}


async def settle(w: World) -> None:
    await w.app.workers.wait_for_complete()
    await w.pilot.pause()


async def focus(w: World, selector: str) -> None:
    w.app.screen.set_focus(w.app.screen.query_one(selector))
    await w.pilot.pause()


def table(w: World) -> DataTable[object]:
    return w.app.screen.query_one(TABLES[w.app.current_mode], DataTable)


async def move(w: World, key: str) -> None:
    t = table(w)
    if t.row_count == 0 and w.app.current_mode == "estimate":  # a ranked table to move in
        await w.pilot.press("ctrl+r")
        await settle(w)
    await focus(w, TABLES[w.app.current_mode])
    last = t.row_count - 1
    assert last >= 1, "the table needs rows for this check"
    t.move_cursor(row=1)
    await w.pilot.pause()
    await w.pilot.press(key)
    expected = {"down": min(2, last), "j": min(2, last), "up": 0, "k": 0}
    expected |= {"g": 0, "home": 0, "G": last, "end": last}
    assert t.cursor_row == expected[key]


async def show(w: World, key: str) -> None:
    await focus(w, TABLES[w.app.current_mode])
    await w.pilot.press(key)
    assert (
        w.app.current_mode == {"1": "catalog", "2": "estimate", "3": "fleet", "4": "policies"}[key]
    )


async def modal(w: World, key: str) -> None:
    await focus(w, TABLES[w.app.current_mode])  # in a text field it is text
    await w.pilot.press(key)
    kind = HelpScreen if key == "question_mark" else ProblemsScreen
    assert isinstance(w.app.screen, kind)
    await w.pilot.press("escape")
    assert not isinstance(w.app.screen, kind)


async def help_f1(w: World, key: str) -> None:
    """F1 opens the help from a text field too (where ``?`` is text), and closes it."""
    fields = w.app.screen.query(Input)
    await focus(w, f"#{fields.first().id}" if fields else TABLES[w.app.current_mode])
    await w.pilot.press(key)
    assert isinstance(w.app.screen, HelpScreen)
    await w.pilot.press(key)
    assert not isinstance(w.app.screen, HelpScreen)


async def quit_app(w: World, key: str) -> None:
    if key == "ctrl+q" and w.app.screen.query(Input):  # from a text field, where q is text
        await focus(w, "Input")
    else:
        await focus(w, TABLES[w.app.current_mode])
    await w.pilot.press(key)
    await w.pilot.pause()
    assert w.app.return_code == 0


async def to_field(w: World, key: str) -> None:
    """tab / shift+tab between the first two fields of the screen."""
    fields = list(w.app.screen.query(Input))
    first, second = fields[0], fields[1]
    await focus(w, f"#{first.id}" if key == "tab" else f"#{second.id}")
    await w.pilot.press(key)
    assert w.app.focused is (second if key == "tab" else first)


async def slash(w: World, key: str) -> None:
    await focus(w, TABLES[w.app.current_mode])
    await w.pilot.press(key)
    assert w.app.focused is w.app.screen.query_one("#search" if w.app.current_mode ==
                                                   "catalog" else "#filter")  # fmt: skip


async def leave_field(w: World, key: str) -> None:
    await focus(w, "#search")
    await w.pilot.press(*"h100", key)
    await w.pilot.pause(0.3)
    assert w.app.focused is table(w) and table(w).row_count == 3


async def policies_leave(w: World, key: str) -> None:
    await focus(w, "#filter")
    await w.pilot.press(*"valid", key)
    assert w.app.focused is table(w) and table(w).row_count == 1


async def catalog_sort(w: World, key: str) -> None:
    await focus(w, "#offers")
    await w.pilot.press(key)
    assert getattr(w.app.screen, "sort", None) == ("on_demand", False)


async def estimate_run(w: World, key: str) -> None:
    screen = w.app.screen
    assert isinstance(screen, EstimateScreen)
    screen.result = None
    await focus(w, "#params" if key == "enter" else "#options")
    await w.pilot.press(key)
    await settle(w)
    assert screen.result is not None and screen.result.options


async def estimate_pane(w: World, key: str) -> None:
    panes = w.app.screen.query_one("#panes", TabbedContent)
    before = panes.active
    await focus(w, "#options")
    await w.pilot.press(key)
    assert panes.active != before


async def estimate_form(w: World, key: str) -> None:
    form = w.app.screen.query_one("#form")
    before = form.display
    await focus(w, "#options")
    await w.pilot.press(key)
    assert form.display is not before


async def escape_to_table(w: World, key: str) -> None:
    await focus(w, "#params")
    await w.pilot.press(key)
    assert w.app.focused is table(w)


async def fleet_refresh(w: World, key: str) -> None:
    before = len(w.fake.calls_to("list_instances"))
    await focus(w, "#instances")
    await w.pilot.press(key)
    await settle(w)
    assert len(w.fake.calls_to("list_instances")) == before + 1


async def fleet_stop(w: World, key: str) -> None:
    await focus(w, "#instances")
    await w.pilot.press(key)
    await settle(w)
    assert isinstance(w.app.screen, ConfirmScreen)
    await w.pilot.press("n")
    assert w.fake.calls_to("stop") == []


async def fleet_live(w: World, key: str) -> None:
    await focus(w, "#instances")
    await w.pilot.press(key)
    assert isinstance(w.app.screen, ConfirmScreen)
    await w.pilot.press("escape")


async def fleet_answer(w: World, key: str) -> None:
    screen = w.app.screen
    assert isinstance(screen, FleetScreen)
    await focus(w, "#instances")
    await w.pilot.press("l")
    await w.pilot.press(key)
    assert w.app.screen is screen and screen.live is (key == "y")


async def fleet_audit(w: World, key: str) -> None:
    screen = w.app.screen
    assert isinstance(screen, FleetScreen)
    await focus(w, "#instances")
    await w.pilot.press(key)
    await settle(w)
    assert screen.auditing


async def policies_rescan(w: World, key: str) -> None:
    (w.context.policies_dir / "c-new.yaml").write_text(VALID_POLICY, encoding="utf-8")
    await focus(w, "#files")
    await w.pilot.press(key)
    assert table(w).row_count == 3


EFFECTS: dict[tuple[str, str], Effect] = {
    **{("*", key): move for key in ("up", "down", "j", "k", "g", "G", "home", "end")},
    **{("*", key): show for key in ("1", "2", "3", "4")},
    ("*", "question_mark"): modal,
    ("*", "f1"): help_f1,
    ("*", "exclamation_mark"): modal,
    ("*", "q"): quit_app,
    ("*", "ctrl+q"): quit_app,
    ("*", "tab"): to_field,
    ("*", "shift+tab"): to_field,
    ("*", "slash"): slash,
    ("catalog", "enter"): leave_field,
    ("catalog", "escape"): leave_field,
    ("catalog", "s"): catalog_sort,
    ("estimate", "enter"): estimate_run,
    ("estimate", "ctrl+r"): estimate_run,
    ("estimate", "t"): estimate_pane,
    ("estimate", "f"): estimate_form,
    ("estimate", "escape"): escape_to_table,
    ("fleet", "r"): fleet_refresh,
    ("fleet", "x"): fleet_stop,
    ("fleet", "l"): fleet_live,
    ("fleet", "y"): fleet_answer,
    ("fleet", "n"): fleet_answer,
    ("fleet", "a"): fleet_audit,
    ("policies", "r"): policies_rescan,
    ("policies", "enter"): policies_leave,
    ("policies", "escape"): policies_leave,
}
"""What each promised key does, checked on its screen; ``*``: the same on every screen."""

QUITS = frozenset({"q", "ctrl+q"})
"""Each checked in its own app: the first one ends it."""
CASES = [
    pytest.param(mode, keys, id=f"{mode}-{'-'.join(keys)}")
    for mode, rows in SCREEN_KEYS.items()
    for row in (*rows, *GLOBAL_KEYS)
    for keys in ([(k,) for k in row.keys] if QUITS & set(row.keys) else [row.keys])
    if keys
]


@pytest.mark.parametrize(("mode", "keys"), CASES)
def test_every_key_in_the_help_works_on_its_screen(
    tui_context: TuiContext, mode: str, keys: tuple[str, ...]
) -> None:
    """One app per line of the help (its keys in turn); one per quit key."""
    effects = {key: EFFECTS.get((mode, key)) or EFFECTS.get(("*", key)) for key in keys}
    missing = [key for key, effect in effects.items() if effect is None]
    if missing:
        pytest.fail(f"the {mode} help promises {missing}: say what each does in EFFECTS")
    fake = demo_fleet()
    context = on_fake(tui_context, fake)
    app = GpuplanApp(context, start=mode)

    async def script(pilot: Pilot[None]) -> None:
        w = World(app, pilot, fake, context)
        await settle(w)
        for key, effect in effects.items():
            assert effect is not None
            await effect(w, key)

    drive(app, script)
