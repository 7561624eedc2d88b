"""The Fleet screen's idle view rows: cells, sorting, filtering and the columns that fit.

Pure functions over what a survey saw (:class:`gpuplan.usecases.lifecycle.survey.Seen`), so the
screen module keeps to the widgets and the workers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from gpuplan.core.lifecycle.idle import IdleVerdict
from gpuplan.core.lifecycle.instances import GpuInstance, InstanceState
from gpuplan.core.lifecycle.plan import Outcome
from gpuplan.tui import format as fmt
from gpuplan.tui.bars import sparkline
from gpuplan.tui.table import NAME_MAX, Column, choose_columns, fit_text

if TYPE_CHECKING:
    from gpuplan.usecases.lifecycle.survey import Seen

SPARK_WIDTH = 24
"""Most characters a sparkline takes; longer windows are bucketed (busiest per bucket)."""
COLUMNS = (
    ("instance", "instance"),
    ("namespace", "namespace"),
    ("owner", "owner"),
    ("verdict", "verdict"),
    ("idle", "idle for"),
    ("util", "util (window)"),
    ("memory", "GPU mem"),
    ("cpu", "CPU"),
    ("hourly", "$/h"),
    ("gpus", "GPUs"),
    ("node", "node"),
    ("state", "state"),
    ("type", "type"),
    ("region", "region"),
)


WORKLOAD_COLUMNS = frozenset({"namespace", "owner", "node"})
"""Columns of Kubernetes workloads: shown only when a row is one."""
PRIORITY = {"instance": 0, "verdict": 0, "idle": 1, "hourly": 1, "region": 1, "namespace": 1,
            "node": 1, "util": 2, "owner": 2}  # fmt: skip
"""Which columns stay on a narrow terminal; columns not named here come last."""
WORKLOAD_PRIORITY = {**PRIORITY, "gpus": 2}
"""With workloads on screen, a pod's share of its node's GPUs is worth a column early."""
SHRINKS = {"instance": (10, 24), "region": (9, 16), "type": (8, 20), "state": (7, 12),
           "namespace": (6, 16), "owner": (8, 30), "node": (6, 24)}  # fmt: skip
"""Text columns that may be cut with an ellipsis: (narrowest, widest admitted at)."""
STRETCH = {"instance": NAME_MAX, "type": 40}
"""Text columns that grow past their widest into room left over (names in full)."""


def fit_columns(
    rows: list[dict[str, str | Text]], width: int, workloads: bool = False
) -> dict[str, int]:
    """The columns that fit ``width``: key -> fixed width (the widest cell where it fits);
    the workload columns (namespace, owner, node) only when ``workloads``.

    Every width is fixed: an auto width is measured when the table next lays out, which
    can come after a snapshot or a modal is drawn (cells cut to their header's width)."""
    rank = WORKLOAD_PRIORITY if workloads else PRIORITY
    columns = [
        Column(key, label, rank.get(key, 3), *SHRINKS.get(key, (0, 0)), STRETCH.get(key, 0))
        for key, label in COLUMNS
        if workloads or key not in WORKLOAD_COLUMNS
    ]
    natural = {  # not the sort arrow: a click must not reflow the columns (table.header)
        key: max([len(plain(r[key])) for r in rows] + [len(label)]) for key, label in COLUMNS
    }
    chosen = choose_columns(columns, natural, width)
    return dict(chosen)


def plain(cell: str | Text) -> str:
    return cell.plain if isinstance(cell, Text) else cell


def cut(cell: str | Text, width: int | None) -> str | Text:
    """A cell shortened to ``width`` with an ellipsis; styled cells keep their style."""
    if width is None or len(plain(cell)) <= width:
        return cell
    if isinstance(cell, Text):
        short = cell.copy()
        short.truncate(width, overflow="ellipsis")
        return short
    return fit_text(cell, width)


def unit_name(inst: GpuInstance) -> str:
    """The row's name: a Kubernetes workload by ``namespace/Kind/name`` (its name alone
    repeats across namespaces and kinds), an instance by its name, else its id."""
    if is_workload(inst):
        return inst.instance_id
    return inst.name or inst.instance_id


def is_workload(inst: GpuInstance) -> bool:
    """A Kubernetes workload (pods under one owner), not a machine."""
    return "owner_kind" in inst.attributes


def owner_of(inst: GpuInstance) -> str:
    """``Kind/name`` of a workload's owner; empty for an instance."""
    if not is_workload(inst):
        return ""
    return f"{inst.attributes['owner_kind']}/{inst.attributes.get('owner_name', '')}"


def row_text(seen: Seen) -> str:
    """What ``/`` searches: name, id, type, region, verdict, state, and a workload's
    namespace, owner and nodes (lower case)."""
    inst = seen.instance
    extra = (inst.attributes.get("namespace", ""), owner_of(inst), inst.attributes.get("nodes", ""))
    parts = (inst.name or "", inst.instance_id, inst.instance_type, inst.region, *extra)
    return " ".join((*parts, seen.decision.verdict.value, inst.state.value)).lower()


def sort_rows(rows: list[Seen], key: str, descending: bool) -> list[Seen]:
    """Rows ordered by a column; rows without a value (no price, not idle) go last."""

    def value(s: Seen) -> float | str | None:
        inst, d = s.instance, s.decision
        values: dict[str, float | str | None] = {
            "instance": unit_name(inst),
            "namespace": inst.attributes.get("namespace") or None,
            "owner": owner_of(inst) or None,
            "node": inst.attributes.get("nodes") or None,
            "verdict": d.verdict.value,
            "idle": d.idle_minutes,
            "util": None,
            "hourly": None if inst.hourly_usd is None else float(inst.hourly_usd),
            "gpus": inst.gpu_count,
            "state": inst.state.value,
            "type": inst.instance_type,
            "region": inst.region,
        }
        return values.get(key)

    present = [s for s in rows if value(s) is not None]
    missing = [s for s in rows if value(s) is None]
    present.sort(key=value, reverse=descending)  # type: ignore[arg-type]
    return present + missing


def instance_row(
    seen: Seen, series: list[float | None], acted: Outcome | None = None
) -> list[str | Text]:
    inst, d = seen.instance, seen.decision
    verdict = Text(d.verdict.value, style=VERDICT_STYLE.get(d.verdict, ""))
    # What this session did, or a state other than running, in the column every width
    # keeps (the state column is among the first a narrow terminal drops).
    if acted is not None:
        verdict = Text(acted_label(acted), style="bold red" if acted is Outcome.FAILED else "bold")
    elif inst.state is not InstanceState.RUNNING:
        verdict = Text(inst.state.value, style="dim")
    return [
        unit_name(inst),
        inst.attributes.get("namespace", ""),
        owner_of(inst),
        verdict,
        fmt.minutes(d.idle_minutes),
        sparkline(series, width=SPARK_WIDTH),
        Text(_percent(d.memory_percent), justify="right"),
        Text(_percent(d.cpu_percent), justify="right"),
        Text(fmt.money(inst.hourly_usd), justify="right"),
        f"{fmt.count(inst.gpu_count)}x {inst.gpu or '?'}",
        inst.attributes.get("nodes", ""),
        Text(acted_label(acted), style="bold") if acted is not None else inst.state.value,
        inst.instance_type,
        inst.region,
    ]


VERDICT_STYLE = {
    IdleVerdict.IDLE: "bold yellow",
    IdleVerdict.BUSY: "green",
    IdleVerdict.UNKNOWN: "red",
}


def acted_label(outcome: Outcome) -> str:
    """The state cell of an instance this session acted on, until a refresh agrees."""
    return "stop failed" if outcome is Outcome.FAILED else outcome.value


def _percent(value: float | None) -> str:
    """GPU memory or CPU over the window; a dash when the source does not report it."""
    return fmt.MISSING if value is None else f"{value:.0f}%"
