"""The TUI audit view: the split bar's proportions and the table in a running app."""

from __future__ import annotations

import asyncio
from decimal import Decimal

from textual.app import App, ComposeResult
from textual.widgets import Static

from gpuplan.core.audit.advice import InstanceAudit
from gpuplan.core.audit.split import Split, Subject
from gpuplan.core.catalog.offers import Provider
from gpuplan.tui.audit_view import AuditPane, AuditResult, split_bar


def _split(busy: str, waiting: str, idle: str, unknown: str) -> Split:
    parts = [Decimal(v) for v in (busy, waiting, idle, unknown)]
    return Split(sum(parts, Decimal(0)), *parts, running_hours=Decimal(1), hours=Decimal(2))


def test_bar_cells_follow_dollars() -> None:
    bar = split_bar(_split("50", "25", "20", "5"), width=20)
    assert bar.plain == "█" * 20
    styles = [str(span.style) for span in bar.spans]
    lengths = [span.end - span.start for span in bar.spans]
    assert list(zip(styles, lengths, strict=True)) == [
        ("green", 10), ("yellow", 5), ("red", 4), ("grey50", 1),
    ]  # fmt: skip
    assert split_bar(_split("0", "0", "0", "0"), width=5).plain == "-----"


def test_oversized_share_is_shaded_at_the_end_of_the_running_cells() -> None:
    bar = split_bar(_split("20", "20", "10", "0"), width=10, oversized=Decimal("10"))
    cells = [(bar.plain[i], str(span.style)) for span in bar.spans
             for i in range(span.start, span.end)]  # fmt: skip
    assert (
        cells
        == [("█", "green")] * 4 + [("█", "yellow")] * 2 + [("▒", "yellow")] * 2 + [("█", "red")] * 2
    )
    # more oversized than ran: only the running cells can be shaded
    capped = split_bar(_split("5", "5", "40", "0"), width=10, oversized=Decimal("50"))
    assert capped.plain == "▒▒" + "█" * 8


def test_pane_shows_one_row_per_instance_with_its_advice_below() -> None:
    subject = Subject("i-1", Provider.AWS, "us-east-1", "p4d.24xlarge", Decimal("21.96"))
    audit = InstanceAudit(subject, _split("10", "80", "0", "0"), None, Decimal(0))

    class Demo(App[None]):
        def compose(self) -> ComposeResult:
            yield AuditPane()

    async def main() -> None:
        app = Demo()
        async with app.run_test(size=(100, 20)) as pilot:
            pane = app.query_one(AuditPane)
            pane.show(AuditResult("p", 7, [audit]), [], 97)
            await pilot.pause()
            assert pane.table.row_count == 1
            assert pane.table.get_row_at(0)[0] == "i-1"
            text = str(pane.query_one("#advice", Static).render())
            assert "busy $10 (11%)" in text and "No advice" in text

    asyncio.run(main())
