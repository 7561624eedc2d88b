"""The Estimate table at 80x24 and 120x40: GPU names whole, digits whole, range and the
spot-outlier flag in the table, not only in Explain."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input

from gpuplan.core.catalog.kinds import Provider
from gpuplan.core.planner.options import Option
from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.context import TuiContext
from gpuplan.tui.estimate import EstimateScreen
from gpuplan.tui.estimate_rows import (
    gpu_cell,
    hours_range,
    mark_cell,
    money_range,
    option_cells,
    pricing_cell,
)
from tests.tui.conftest import drive, fixed_clock

SIZES = pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
NUMBERS = {"hours", "hours_range", "cost", "cost_range", "hourly"}


def bundled(tmp_path: Path) -> TuiContext:
    from gpuplan.loaders.paths import bundled_pricing_dir

    return TuiContext(catalog_dir=str(bundled_pricing_dir()), policies_dir=tmp_path,
                      clock=fixed_clock)  # fmt: skip


def check_table(screen: EstimateScreen) -> DataTable[object]:
    """Every shown row: GPU cell whole and telling rows apart, no number cut."""
    assert screen.result is not None
    table = screen.query_one("#options", DataTable)
    widths = {str(c.key.value): c.width for c in table.ordered_columns}
    options = screen.result.options[: table.row_count]
    assert {"gpu", "hours", "cost", "region"} <= set(widths), widths
    for index, option in enumerate(options):
        row = {k: str(v) for k, v in zip(widths, table.get_row_at(index), strict=True)}
        assert row["gpu"] == gpu_cell(option) and "…" not in row["gpu"]
        assert len(row["gpu"]) <= widths["gpu"]
        for key in NUMBERS & set(widths):
            assert row[key] == option_cells(option)[key] and len(row[key]) <= widths[key]
        assert ("!" in row["mark"]) is (option.spot_outlier is not None)
    by_cell: dict[str, set[tuple[float, str]]] = {}
    for option in options:
        by_cell.setdefault(gpu_cell(option), set()).add((option.gpus, option.gpu))
    assert all(len(gpus) == 1 for gpus in by_cell.values())  # one cell, one GPU
    return table


@SIZES
def test_bundled_catalog_estimate_fits(tmp_path: Path, size: tuple[int, int]) -> None:
    """A 7B model on 1T tokens on the bundled catalog: A100-40GB and -80GB rows differ."""
    app = GpuplanApp(bundled(tmp_path), start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        screen = app.screen
        assert isinstance(screen, EstimateScreen)
        screen.query_one("#tokens", Input).value = "1T"
        screen.query_one("#gpu", Input).value = "A100-40GB, A100-80GB"
        await pilot.pause()
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        table = check_table(screen)
        gpus = {str(c) for c in table.get_column("gpu")}
        assert any("A100-40GB" in g for g in gpus) and any("A100-80GB" in g for g in gpus)
        assert "hours_range" in {str(c.key.value) for c in table.ordered_columns}

    drive(app, script, size=size)


@SIZES
def test_fixture_estimate_fits(tui_context: TuiContext, size: tuple[int, int]) -> None:
    app = GpuplanApp(tui_context, start="estimate")

    async def script(pilot: Pilot[None]) -> None:
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, EstimateScreen)
        table = check_table(app.screen)
        shown = {str(c.key.value) for c in table.ordered_columns}
        assert {"hours_range", "pricing"} <= shown
        if size[0] >= 120:
            assert "cost_range" in shown

    drive(app, script, size=size)


def option(**changes: object) -> Option:
    base: dict[str, object] = dict(
        gpu="A100-80GB", gpus=1024, nodes=128, gpus_per_node=8, provider=Provider.AWS,
        instance_type="p4de.24xlarge", region="us-east-1", pricing="spot",
        hours=1687.0, hours_low=1198.0, hours_high=2413.0, cost_usd=Decimal("33278.77"),
        cost_usd_low=Decimal("23627.93"), cost_usd_high=Decimal("47588.64"),
    )  # fmt: skip
    base.update(changes)
    return Option(**base)  # type: ignore[arg-type]


def test_spot_outlier_is_flagged_in_the_row() -> None:
    flagged = option(spot_outlier="spot $2.47/h in us-east-1 is under half the median", pareto=True)
    assert mark_cell(flagged).plain == "★!" and pricing_cell(flagged) == "spot!"
    plain = option()
    assert mark_cell(plain).plain == " " and pricing_cell(plain) == "spot"
    assert pricing_cell(option(pricing="on_demand")) == "on-dem"


def test_a_reserved_term_paid_whole_and_used_in_part_is_marked() -> None:
    # 1,687 h of a 1-year term at $100/h: the whole $876,000 is charged, most of it unused.
    whole = option(pricing="reserved_1y", hourly_usd=Decimal(100),
                   commitment_usd=Decimal(876_000), cost_usd=Decimal(876_000))  # fmt: skip
    assert pricing_cell(whole).endswith("^")
    reused = option(pricing="reserved_1y", hourly_usd=Decimal(100),
                    commitment_usd=Decimal(876_000), cost_usd=Decimal("168700.00"))  # fmt: skip
    assert not pricing_cell(reused).endswith("^")


def test_cells_keep_the_whole_gpu_name_and_the_range() -> None:
    assert gpu_cell(option()) == "1024x A100-80GB"
    assert gpu_cell(option(gpu="A100-40GB", gpus=0.5)) == "0.5x A100-40GB"
    assert hours_range(1198.0, 2413.0) == "50-101 d"
    assert hours_range(20.0, 40.0) == "20-40 h"
    assert hours_range(2.0, 5.0) == "2.0-5.0 h"
    assert hours_range(None, 3.0) == "-"
    assert money_range(Decimal("23627.93"), Decimal("47588.64")) == "24k-48k"
    assert money_range(Decimal("450"), Decimal("2500")) == "450-2.5k"
    assert money_range(Decimal("1.2e6"), Decimal("2.34e6")) == "1.2M-2.3M"
