"""The Catalog screen driven with Pilot: filter, sort, detail panel, bad input."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static

from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.catalog import DEBOUNCE_S, CatalogScreen
from gpuplan.tui.context import TuiContext
from tests.tui.conftest import drive


def column(app: GpuplanApp, key: str) -> list[str]:
    table = app.screen.query_one("#offers", DataTable)
    return [str(cell) for cell in table.get_column(key)]


def shown(app: GpuplanApp, widget_id: str) -> str:
    return str(app.screen.query_one(widget_id, Static).render())


def test_catalog_opens_with_every_offer(tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context)

    async def script(pilot: Pilot[None]) -> None:
        assert isinstance(app.screen, CatalogScreen)
        table = app.screen.query_one("#offers", DataTable)
        assert table.row_count == 8
        assert table.has_focus
        assert "8/8 offers" in shown(app, "#status")
        assert "as of 2026-12-01" in shown(app, "#status")

    drive(app, script)


def test_filter_to_h100_with_the_keyboard(tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context)

    async def script(pilot: Pilot[None]) -> None:
        await pilot.press("slash")  # the search box
        await pilot.press("shift+tab", "shift+tab", "shift+tab")  # pricing, region, GPU
        assert app.focused is app.screen.query_one("#gpu", Input)
        await pilot.press(*"h100", "enter")
        assert column(app, "gpu") == ["8x H100", "8x H100", "8x H100"]
        assert column(app, "provider") == ["aws", "azure", "gcp"]
        assert app.screen.query_one("#offers", DataTable).has_focus  # enter: back to table
        assert "3/8 offers" in shown(app, "#status")
        detail = shown(app, "#detail")
        assert "H100" in detail and "bf16 989" in detail  # dense bf16 peak from gpus.toml

    drive(app, script)


def test_sort_by_price_per_gpu_and_detail_follows_cursor(tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context)

    async def script(pilot: Pilot[None]) -> None:
        await pilot.press("s", "s", "s")  # cloud order -> on-demand -> spot -> $/GPU-h
        per_gpu = [float(c.replace(",", "")) for c in column(app, "per_gpu")]
        assert per_gpu == sorted(per_gpu)
        assert "sort: $/GPU-h▲" in shown(app, "#status")
        await pilot.press("down")
        assert column(app, "instance")[1].rstrip("…") in shown(app, "#detail")

    drive(app, script)


def test_unknown_gpu_is_shown_not_raised(tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context)

    async def script(pilot: Pilot[None]) -> None:
        app.screen.query_one("#gpu", Input).focus()
        await pilot.press(*"a100")
        await pilot.pause(DEBOUNCE_S + 0.2)
        assert "ambiguous" in shown(app, "#status")
        assert app.screen.query_one("#offers", DataTable).row_count == 0
        await pilot.press(*"-80gb")
        await pilot.pause(DEBOUNCE_S + 0.2)
        assert column(app, "instance") == ["p4de.24xlarge", "a2-ultragpu-1g"]

    drive(app, script)


def test_text_search_and_spot_pricing(tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context)

    async def script(pilot: Pilot[None]) -> None:
        app.screen.query_one("#search", Input).value = "us-east-1"
        await pilot.pause(DEBOUNCE_S + 0.2)
        assert column(app, "region") == ["us-east-1"] * 3
        app.screen.query_one("#search", Input).value = ""
        app.screen.query_one("#pricing").value = "spot"  # type: ignore[attr-defined]
        await pilot.pause(DEBOUNCE_S + 0.2)
        # Azure's 8x H100 has no spot price in the fixture: it drops out.
        assert "Standard_ND96isr_H100_v5" not in column(app, "instance")
        assert len(column(app, "instance")) == 7

    drive(app, script)


def test_help_opens_and_closes_and_q_quits(tui_context: TuiContext) -> None:
    app = GpuplanApp(tui_context)

    async def script(pilot: Pilot[None]) -> None:
        await pilot.press("question_mark")
        assert type(app.screen).__name__ == "HelpScreen"
        await pilot.press("escape")
        assert isinstance(app.screen, CatalogScreen)
        await pilot.press("q")

    drive(app, script)
    assert app.return_code == 0


def test_broken_catalog_is_an_error_line(tui_context: TuiContext) -> None:
    assert tui_context.catalog_dir is not None
    (Path(tui_context.catalog_dir) / "aws.csv").write_text("nonsense\n1,2\n", encoding="utf-8")
    app = GpuplanApp(tui_context)

    async def script(pilot: Pilot[None]) -> None:
        assert "aws.csv" in shown(app, "#status")
        assert app.screen.query_one("#offers", DataTable).row_count == 0

    drive(app, script)


def test_click_a_header_to_sort_with_the_mouse(tui_context: TuiContext) -> None:
    """Two clicks on the same spot: ascending, then descending, the columns unmoved."""
    app = GpuplanApp(tui_context)

    async def script(pilot: Pilot[None]) -> None:
        table = app.screen.query_one("#offers", DataTable)
        columns = table.ordered_columns
        target = next(i for i, c in enumerate(columns) if c.key.value == "tflops")
        x = sum(c.get_render_width(table) for c in columns[:target]) + 2
        widths = [c.get_render_width(table) for c in columns]
        for arrow, descending in (("▲", False), ("▼", True)):
            assert await pilot.click("#offers", offset=(x, 0))
            await pilot.pause()
            assert f"sort: TF/s/${arrow}" in shown(app, "#status")
            values = [float(c.replace(",", "")) for c in column(app, "tflops") if c != "-"]
            assert values == sorted(values, reverse=descending)
            assert [c.get_render_width(table) for c in table.ordered_columns] == widths

    drive(app, script)


def test_spot_outlier_is_flagged_with_its_reason(tmp_path: Path) -> None:
    """p4d spot at $2.47/h in one region against $6-13 in four others: flagged with `!`
    in the spot column (and $/GPU-h when pricing is spot), the reason in the detail."""
    from tests.conftest import write_catalog
    from tests.tui.conftest import fixed_clock

    def p4d(region: str, spot: str) -> str:
        return (f"p4d.24xlarge,{region},A100-40GB,8,40,96,1152,NVLink,400,32.77,{spot},"
                f"{region}-az1,,,2026-12-01,test")  # fmt: skip

    prices = {"us-east-1": "2.47", "us-west-2": "6.04", "eu-west-1": "8.00",
              "ap-northeast-1": "9.10", "eu-central-1": "13.34"}  # fmt: skip
    catalog = write_catalog(tmp_path / "pricing", aws=[p4d(r, p) for r, p in prices.items()])
    context = TuiContext(catalog_dir=str(catalog), policies_dir=tmp_path, clock=fixed_clock)
    app = GpuplanApp(context)

    async def script(pilot: Pilot[None]) -> None:
        app.screen.query_one("#search", Input).value = "p4d"
        await pilot.pause(DEBOUNCE_S + 0.2)
        spot = dict(zip(column(app, "region"), column(app, "spot"), strict=True))
        assert spot["us-east-1"] == "2.47!"
        assert [r for r, s in spot.items() if s.endswith("!")] == ["us-east-1"]
        row = column(app, "region").index("us-east-1")
        app.screen.query_one("#offers", DataTable).move_cursor(row=row)
        await pilot.pause()
        detail = shown(app, "#detail")
        assert "! spot $2.47/h in us-east-1 (us-east-1-az1) is under half the median" in detail
        app.screen.query_one("#pricing").value = "spot"  # type: ignore[attr-defined]
        await pilot.pause(DEBOUNCE_S + 0.2)
        per_gpu = dict(zip(column(app, "region"), column(app, "per_gpu"), strict=True))
        assert per_gpu["us-east-1"] == "0.31!" and not per_gpu["us-west-2"].endswith("!")

    drive(app, script, size=(120, 40))


def test_the_detail_line_says_stale_and_how_the_cloud_bills() -> None:
    from datetime import date

    from gpuplan.loaders.catalog import load_catalog
    from gpuplan.tui.catalog_rows import offer_detail

    catalog = load_catalog()
    by_key = {o.key: o for o in catalog.offers}
    old = by_key[("azure", "Standard_ND96isr_H100_v5", "westeurope")]  # read 2023-12-18
    text = offer_detail(old, catalog, today=date(2026, 12, 4)).plain
    assert "as of 2023-12-18 (stale: over 90 days)" in text
    fresh = by_key[("lambda", "gpu_8x_h100_sxm5", "us-east-1")]
    text = offer_detail(fresh, catalog, today=date(2026, 12, 4)).plain
    assert "stale" not in text and "billing: per minute" in text
