"""TUI fixtures: a fixed small catalog folder and a fixed clock, so screens are deterministic."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual import events
from textual.app import App
from textual.keys import _character_to_key
from textual.pilot import Pilot

from gpuplan.tui.context import TuiContext
from tests.conftest import write_catalog

FIXED_NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
SNAPSHOT_SIZE = (100, 30)


def fixed_clock() -> datetime:
    return FIXED_NOW


VALID_POLICY = """\
version: 1
name: team-a
scope: {}
budget:
  monthly_usd: 1000
  alert_at_percent: [50, 80, 100]
idle:
  threshold_percent: 5
"""
BROKEN_POLICY = """\
version: 1
name: team-b
budget:
  monthly_usd: 1000
idle:
  threshold_percent: 150
  windw_minutes: 60
"""


def write_policies(root: Path) -> Path:
    """A policies folder with one valid and one broken file."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "a-valid.yaml").write_text(VALID_POLICY, encoding="utf-8")
    (root / "b-broken.yaml").write_text(BROKEN_POLICY, encoding="utf-8")
    return root


@pytest.fixture(autouse=True)
def _private_state_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's state and cache folders (crash reports) inside this test's folder:
    nothing the TUI writes may land in the shared temp folder or the developer's home."""
    state = tmp_path / "xdg-state"
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    return state


@pytest.fixture
def tui_context(tmp_path: Path) -> TuiContext:
    catalog = write_catalog(tmp_path / "pricing")
    write_policies(tmp_path / "policies")
    return TuiContext(
        catalog_dir=str(catalog),
        policies_dir=tmp_path / "policies",
        clock=fixed_clock,
        ledger_path=tmp_path / "ledger.sqlite",
    )


def drive(
    app: App[None],
    script: Callable[[Pilot[None]], Awaitable[None]],
    size: tuple[int, int] = SNAPSHOT_SIZE,
) -> None:
    """Run ``app`` headless, let it settle, then run ``script`` with a Pilot.

    ``asyncio.run`` instead of an async pytest plugin: one less dependency, same loop.
    """

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await script(pilot)

    asyncio.run(main())


async def burst(pilot: Pilot[None], keys: str | list[str]) -> None:
    """Send ``keys`` as a terminal does when they are typed faster than the app draws:
    all queued at once, none handled before the last arrives; then let the app settle.

    ``pilot.press`` waits for the app to go idle after every key, which hides the races
    a person typing at full speed (or pasting) runs into.
    """
    driver = pilot.app._driver
    assert driver is not None
    for key in keys:
        name = _character_to_key(key) if len(key) == 1 and not key.isalnum() else key
        event = events.Key(name, key if len(key) == 1 else None)
        event.set_sender(pilot.app)
        driver.send_message(event)
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
