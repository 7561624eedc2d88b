"""TUI fixtures: a fixed small catalog folder and a fixed clock, so screens are deterministic."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from textual.app import App
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
