"""The audit view: one row per instance with its paid dollars as a split bar.

``split_bar`` is pure rendering (numbers in, Rich ``Text`` out); ``AuditTable`` is a
Textual ``DataTable`` a screen (the Fleet screen) can mount and fill with
:func:`AuditTable.show`. Busy is green, waiting yellow, idle red, unknown dim; the
oversized dollars and the advice follow as text.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from rich.text import Text
from textual.widgets import DataTable

from gpuplan.core.audit.advice import InstanceAudit
from gpuplan.core.audit.split import Split

BLOCK = "█"
PARTS: tuple[tuple[str, str], ...] = (
    ("busy", "green"),
    ("waiting", "yellow"),
    ("idle", "red"),
    ("unknown", "grey50"),
)


def split_bar(split: Split, width: int = 30) -> Text:
    """Cells per part in proportion to its dollars (largest remainders: exactly ``width``)."""
    bar = Text()
    if split.paid <= 0:
        return bar.append("-" * width, style="dim")
    exact = [float(getattr(split, name) / split.paid) * width for name, _ in PARTS]
    cells = [int(x) for x in exact]
    order = sorted(range(len(exact)), key=lambda i: exact[i] - cells[i], reverse=True)
    for i in order[: width - sum(cells)]:
        cells[i] += 1
    for (_, colour), count in zip(PARTS, cells, strict=True):
        bar.append(BLOCK * count, style=colour)
    return bar


def _money(value: Decimal) -> str:
    return f"{float(value):,.0f}"


class AuditTable(DataTable[str | Text]):
    """Instances sorted by dollars at stake, each with its split bar."""

    COLUMNS = ("instance", "type", "paid $", "busy | waiting | idle | unknown", "oversized $",
               "$/month at stake", "advice")  # fmt: skip

    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.add_columns(*self.COLUMNS)

    def show(self, audits: Sequence[InstanceAudit], width: int = 30) -> None:
        self.clear()
        for a in audits:
            self.add_row(
                a.subject.instance_id, a.subject.instance_type, _money(a.split.paid),
                split_bar(a.split, width), _money(a.oversized),
                _money(a.at_stake_per_month),
                ", ".join(v.kind.value for v in a.advice) or "-",
                key=a.subject.instance_id,
            )  # fmt: skip
