"""The Fleet screen's audit view: where each instance's dollars went, and what to change.

One row per audited instance, sorted by dollars at stake per month (a header click sorts
by another column), each with its paid dollars drawn as a bar: busy green, waiting
yellow, idle red, unknown grey, and the oversized dollars (which overlap busy and
waiting) shaded ``▒`` at the end of the running part. Below, the selected row's split in
numbers and its advice with the evidence behind it. Columns are chosen for the width by
priority (instance, bar and dollars at stake first). ``split_bar`` and the cell and text
builders are pure; :class:`AuditPane` is the widget the Fleet screen mounts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import groupby

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from gpuplan.core.audit.advice import InstanceAudit
from gpuplan.core.audit.split import Split
from gpuplan.tui import format as fmt
from gpuplan.tui.table import NAME_MAX, Column, NavTable, choose_columns, fit_text, header

BLOCK = "█"
OVERSIZED = "▒"
PARTS: tuple[tuple[str, str], ...] = (
    ("busy", "green"),
    ("waiting", "yellow"),
    ("idle", "red"),
    ("unknown", "grey50"),
)
COLUMNS: tuple[Column, ...] = (
    Column("instance", "instance", 0, 10, 24, NAME_MAX),
    Column("split", "split of paid $", 0),
    Column("stake", "$/mo at stake", 0),
    Column("paid", "paid $", 2),
    Column("advice", "advice", 1, 10, 48),
    Column("busy", "busy %", 3),
    Column("oversized", "oversized $", 3),
    Column("type", "type", 4, 8, 20),
    Column("namespace", "namespace", 2, 6, 16),
    Column("owner", "owner", 3, 8, 30),
    Column("gpus", "GPUs", 3),
    Column("hourly", "$/h", 3),
    Column("node", "node", 4, 6, 24),
)
WORKLOAD_COLUMNS = frozenset({"namespace", "owner", "gpus", "hourly", "node"})
"""Columns of Kubernetes workloads: shown only when an audited row is one."""


def split_bar(split: Split, width: int = 30, oversized: Decimal = Decimal(0)) -> Text:
    """Cells per part in proportion to its dollars (largest remainders: exactly ``width``);
    the last ``oversized`` share of the running cells (busy, waiting) drawn ``▒``."""
    bar = Text()
    if split.paid <= 0:
        return bar.append("-" * width, style="dim")
    exact = [float(getattr(split, name) / split.paid) * width for name, _ in PARTS]
    cells = [int(x) for x in exact]
    order = sorted(range(len(exact)), key=lambda i: exact[i] - cells[i], reverse=True)
    for i in order[: width - sum(cells)]:
        cells[i] += 1
    running = cells[0] + cells[1]
    shaded = min(running, round(float(oversized / split.paid) * width))
    colours = [colour for (_, colour), count in zip(PARTS, cells, strict=True)
               for _ in range(count)]  # fmt: skip
    glyphs = [OVERSIZED if running - shaded <= i < running else BLOCK for i in range(width)]
    for (glyph, colour), run in groupby(zip(glyphs, colours, strict=True)):
        bar.append(glyph * len(list(run)), style=colour)
    return bar


def _dollars(value: Decimal) -> Text:
    return Text(fmt.compact_money(value), justify="right")


def is_workload(a: InstanceAudit) -> bool:
    return "owner_kind" in a.subject.attributes


def audit_name(a: InstanceAudit) -> str:
    """A workload by ``namespace/Kind/name``, an instance by its name, else its id."""
    subject = a.subject
    return subject.instance_id if is_workload(a) else subject.name or subject.instance_id


def audit_cells(a: InstanceAudit, bar_width: int) -> dict[str, str | Text]:
    s = a.split
    facts = a.subject.attributes
    owner = f"{facts['owner_kind']}/{facts.get('owner_name', '')}" if is_workload(a) else ""
    return {
        "instance": audit_name(a),
        "split": split_bar(s, bar_width, a.oversized),
        "stake": _dollars(a.at_stake_per_month),
        "paid": _dollars(s.paid),
        "advice": ", ".join(v.kind.value for v in a.advice) or "-",
        "busy": Text(f"{100 * s.share(s.busy):.0f}%", justify="right"),
        "oversized": _dollars(a.oversized),
        "type": a.subject.instance_type,
        "namespace": facts.get("namespace", ""),
        "owner": owner,
        "gpus": Text(fmt.count(a.subject.gpu_count), justify="right"),
        "hourly": Text(fmt.money(a.subject.hourly_usd), justify="right"),
        "node": facts.get("nodes", ""),
    }


def advice_text(a: InstanceAudit) -> Text:
    """The selected row: its split in numbers (coloured as in the bar), then each advice
    with its dollars per month and its evidence; or why there is none."""
    s, subject = a.split, a.subject
    out = Text()
    name = f" ({subject.name})" if subject.name else ""
    out.append(f"{subject.instance_id}{name}", style="bold")
    out.append(f" {subject.instance_type} · paid ${s.paid:,.0f} over {s.hours:.0f} h: ")
    for (part, colour), sep in zip(PARTS, (" · ", " · ", " · ", ""), strict=True):
        amount = getattr(s, part)
        out.append(f"{part} ${amount:,.0f} ({s.share(amount):.0%})", style=colour)
        out.append(sep)
    if a.oversized:
        out.append(f" · {OVERSIZED} oversized ${a.oversized:,.0f}")
    for v in a.advice:
        out.append(f"\n▸ {v.kind.value}, ${v.usd_per_month:,.0f}/month: ", style="bold")
        out.append(v.action)
        out.append(f"\n  {v.evidence}", style="dim")
    if not a.advice:
        out.append(
            f"\nNo advice: busy {s.share(s.busy):.0%} of dollars paid, and no change "
            "found worth $10/month or more.",
            style="green",
        )
    return out


@dataclass
class AuditResult:
    """What one audit run gave the screen."""

    policy: str
    days: int
    audits: list[InstanceAudit] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """The dollars at stake first (the figure the view is sorted by), then the paid
        dollars and the counts: a narrow status line cuts the end."""
        paid = sum((a.split.paid for a in self.audits), Decimal(0))
        stake = sum((a.at_stake_per_month for a in self.audits), Decimal(0))
        parts = [f"{self.policy}, {self.days} d: ${stake:,.0f}/mo at stake", f"${paid:,.0f} paid"]
        if self.problems:
            parts.append(f"{fmt.plural(len(self.problems), 'problem')} (!)")
        parts.append(f"{len(self.audits)} audited")
        if self.skipped:
            parts.append(f"{len(self.skipped)} skipped")
        return ", ".join(parts)


def sort_audits(rows: list[InstanceAudit], key: str, descending: bool) -> list[InstanceAudit]:
    def value(a: InstanceAudit) -> Decimal | float | str:
        s = a.split
        values: dict[str, Decimal | float | str] = {
            "instance": audit_name(a),
            "namespace": a.subject.attributes.get("namespace", ""),
            "owner": a.subject.attributes.get("owner_name", ""),
            "gpus": a.subject.gpu_count,
            "hourly": a.subject.hourly_usd,
            "node": a.subject.attributes.get("nodes", ""),
            "split": s.share(s.busy),
            "stake": a.at_stake_per_month,
            "paid": s.paid,
            "advice": ", ".join(v.kind.value for v in a.advice),
            "busy": s.share(s.busy),
            "oversized": a.oversized,
            "type": a.subject.instance_type,
        }
        return values[key]

    return sorted(rows, key=value, reverse=descending)


def fit_audit_columns(
    rows: Sequence[dict[str, str | Text]], width: int, workloads: bool = False
) -> dict[str, int]:
    """Column key -> width for ``width`` characters, most important columns first; the
    workload columns (namespace, owner, GPUs, $/h, node) only when ``workloads``."""
    columns = [c for c in COLUMNS if workloads or c.key not in WORKLOAD_COLUMNS]
    natural = {
        c.key: max([len(_plain(r[c.key])) for r in rows] + [len(c.label) + 1]) for c in columns
    }
    return choose_columns(columns, natural, width)


def _plain(cell: str | Text) -> str:
    return cell.plain if isinstance(cell, Text) else cell


class AuditPane(Vertical):
    """The audit table and, below it, the selected row's split and advice."""

    DEFAULT_CSS = """
    AuditPane { height: 1fr; }
    AuditPane #audit-table { height: 1fr; }
    AuditPane #advice { height: 8; padding: 0 1; border-top: solid $primary; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.result: AuditResult | None = None
        self.rows: list[InstanceAudit] = []
        """The rows as drawn: filtered, in the table's order."""
        self.sort: tuple[str, bool] | None = None
        """A clicked column and whether descending; None: dollars at stake (the default)."""
        self.words: list[str] = []
        self.width = 80

    def compose(self) -> ComposeResult:
        # The bars keep their colours on the cursor row ("renderable" wins over CSS).
        yield NavTable(id="audit-table", cursor_type="row", cursor_foreground_priority="renderable")
        yield Static("", id="advice")

    @property
    def table(self) -> NavTable:
        return self.query_one("#audit-table", NavTable)

    def show(self, result: AuditResult, words: Sequence[str], width: int) -> None:
        self.result = result
        self.draw(words, width)

    def draw(self, words: Sequence[str], width: int) -> None:
        """Rows whose instance, type or advice match every word, in the columns that fit."""
        self.words, self.width = list(words), width
        table = self.table
        table.clear(columns=True)
        audits = list(self.result.audits) if self.result else []
        self.rows = [a for a in audits if all(w in _row_text(a) for w in words)]
        if self.sort is not None:
            self.rows = sort_audits(self.rows, *self.sort)
        bar_width = 30 if width >= 117 else 20 if width >= 97 else 16
        cells = [audit_cells(a, bar_width) for a in self.rows]
        workloads = any(is_workload(a) for a in audits)
        layout = fit_audit_columns(cells, width, workloads)
        labels = {c.key: c.label for c in COLUMNS}
        for key, size in layout.items():
            here = self.sort is not None and self.sort[0] == key
            label = header(labels[key], here, bool(self.sort and self.sort[1]))
            # Every width fixed here: an auto width is measured whenever the table next
            # lays out, which raced with the pane being shown (header-wide bars).
            table.add_column(label, key=key, width=size)
        for a, row in zip(self.rows, cells, strict=True):
            table.add_row(*(_cut(row[k], w) for k, w in layout.items()),
                          key=a.subject.instance_id)  # fmt: skip
        self._advice(self.rows[0] if self.rows else None)

    def selected(self) -> InstanceAudit | None:
        row = self.table.cursor_row
        return self.rows[row] if 0 <= row < len(self.rows) else None

    @on(DataTable.RowHighlighted, "#audit-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._advice(self.selected())

    @on(DataTable.HeaderSelected, "#audit-table")
    def _sort_by(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        key = str(event.column_key.value)
        same = self.sort is not None and self.sort[0] == key
        self.sort = (key, not self.sort[1]) if same and self.sort else (key, False)
        self.draw(self.words, self.width)

    def _advice(self, audit: InstanceAudit | None) -> None:
        advice = self.query_one("#advice", Static)
        if audit is not None:
            advice.update(advice_text(audit))
        elif self.result is not None and self.result.skipped:
            advice.update(Text("Skipped: " + "; ".join(self.result.skipped[:5]), style="dim"))
        else:
            advice.update("")


def _row_text(a: InstanceAudit) -> str:
    """What ``/`` searches in the audit view: name, id, type, advice kinds (lower case)."""
    kinds = " ".join(v.kind.value for v in a.advice)
    facts = " ".join(a.subject.attributes.get(k, "") for k in ("namespace", "owner_kind", "nodes"))
    subject = a.subject
    return f"{subject.name} {subject.instance_id} {subject.instance_type} {kinds} {facts}".lower()


def _cut(cell: str | Text, width: int) -> str | Text:
    if len(_plain(cell)) <= width:
        return cell
    if isinstance(cell, Text):
        short = cell.copy()
        short.truncate(width, overflow="ellipsis")
        return short
    return fit_text(cell, width)
