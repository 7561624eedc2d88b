"""Writes the README's TUI screenshots (SVG) under docs/img/, from the real app.

Each screen is driven headless with the same keys a person would press, on the bundled
catalog and the example policies, at 100x30. The clock is fixed so no date in the
pictures changes between runs; prices change only when the bundled catalog does. The
Fleet audit view reads the tests' in-memory fleet (a week of metrics for five
instances, ``tests/tui/fleet_fake.py``), since the pictures must not need a cloud.

Usage: python scripts/tui_screenshots.py
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from textual.pilot import Pilot

from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.context import TuiContext

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "img"
SIZE = (100, 30)

Script = Callable[[Pilot[None]], Awaitable[None]]


def clock() -> datetime:
    return datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


async def catalog(pilot: Pilot[None]) -> None:
    await pilot.press("slash", "shift+tab", "shift+tab", "shift+tab", *"h100", "enter")
    await pilot.press("s", "s", "s")  # on-demand, spot, then $ per GPU-hour


async def estimate(pilot: Pilot[None]) -> None:
    await pilot.press("2", "enter")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def policies(pilot: Pilot[None]) -> None:
    await pilot.press("4")


async def fleet_audit(pilot: Pilot[None]) -> None:
    await pilot.press("3")
    await pilot.app.workers.wait_for_complete()
    await pilot.press("a")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("down")  # the one-of-eight row: its right-sizing advice below


SHOTS: dict[str, Script] = {
    "tui-catalog.svg": catalog,
    "tui-estimate.svg": estimate,
    "tui-policies.svg": policies,
    "tui-fleet-audit.svg": fleet_audit,
}


def _on_test_fleet(context: TuiContext) -> TuiContext:
    sys.path.insert(0, str(ROOT))
    from tests.tui.fleet_fake import audit_fleet
    from tests.tui.test_fleet_screen import on_fake

    return replace(
        on_fake(context, audit_fleet()), policy_file=ROOT / "policies" / "notify-only.yaml"
    )


async def shoot(name: str, script: Script, ledger: Path) -> None:
    context = TuiContext(policies_dir=ROOT / "policies", clock=clock, ledger_path=ledger)
    if script is fleet_audit:
        context = _on_test_fleet(context)
    app = GpuplanApp(context)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await script(pilot)
        await pilot.pause()
        app.save_screenshot(filename=name, path=str(OUT))
    print(f"wrote {OUT / name}")


def main() -> int:
    import tempfile

    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, script in SHOTS.items():
            asyncio.run(shoot(name, script, Path(tmp) / "ledger.sqlite3"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
