"""Reads and writes trace folders for the idle-savings simulator (format v2; v1 loads too).

A folder (documented in docs/simulation.md, a stable interface other tools write):

- ``fleet.csv``: ``instance_id,instance_type[,trace_class][,hourly_usd]`` (hourly_usd may
  be empty: the catalog's on-demand price of instance_type is used); without it, every
  ``*.csv`` is one instance at $1/h;
- ``<instance_id>.csv`` per instance (a Kubernetes workload's id is
  ``namespace/Kind/name``, its file ``<namespace>/<Kind>/<name>.csv``), with a header
  naming its columns (any order, extra columns ignored):

  - ``minute``: rows at one fixed step (1 or 5 minutes...) from 0; a skipped row is a gap;
  - ``utilisation``: the busiest GPU, percent; empty when not every GPU reported;
  - ``gpu_memory_used_percent`` (optional): the fullest GPU's memory in use, percent of
    its total; empty when not reported;
  - ``cpu_percent`` (optional): the instance's CPU, percent;
  - ``gpu0_utilisation``, ``gpu1_utilisation``... (optional): each GPU's utilisation,
    percent (the audit's per-GPU view; the simulator reads ``utilisation`` only);
  - ``kind`` (optional): ``busy`` or ``idle``, the truth label; ``label``: free text.

  Version 1 files (``minute,utilisation[,kind,label]``, one row a minute) are the same
  format without the optional columns. Numbers must be finite; percentages outside 0-100
  (jitter) are clamped.

Without ``kind``, labels are derived: a run of minutes below ``threshold`` percent that
lasts at least ``min_idle_minutes`` is idle, everything else busy (state this when
reporting: the oracles then share the simulator's own notion of idle).
"""

from __future__ import annotations

import csv
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

from gpuplan.core.errors import DataError
from gpuplan.core.lifecycle.simulation.traces import Kind, Segment, Trace, workload_parts
from gpuplan.loaders.safe_read import TRACE_LIMIT, read_text

FLEET_FILE = "fleet.csv"
MAX_MINUTES = 366 * 24 * 60
MAX_STEP = 60
COLUMNS = ("minute", "utilisation", "gpu_memory_used_percent", "cpu_percent", "kind", "label")
_ALIASES = {"utilization": "utilisation"}


def write_traces(directory: Path, traces: Sequence[Trace]) -> None:
    """Format v2, one row a minute; memory and CPU columns only when the traces have them."""
    try:
        _write_traces(directory, traces)
    except OSError as exc:
        raise DataError(
            str(directory), f"cannot write traces here: {exc.strerror or exc}"
        ) from None


def _write_traces(directory: Path, traces: Sequence[Trace]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / FLEET_FILE).open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["instance_id", "instance_type", "trace_class", "hourly_usd"])
        for t in traces:
            writer.writerow([t.instance_id, t.instance_type, t.trace_class, str(t.hourly_usd)])
    for t in traces:
        columns = [("utilisation", t.utilisation)]
        if t.memory is not None:
            columns.append(("gpu_memory_used_percent", t.memory))
        if t.cpu is not None:
            columns.append(("cpu_percent", t.cpu))
        for index, series in enumerate(t.gpus or ()):
            columns.append((f"gpu{index}_utilisation", series))
        path = series_path(directory, t.instance_id)
        path.parent.mkdir(parents=True, exist_ok=True)  # a workload: namespace/Kind/name.csv
        with path.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(["minute", *(name for name, _ in columns), "kind", "label"])
            for seg in t.segments:
                for minute in range(seg.start, seg.end):
                    cells = [_cell(values[minute]) for _, values in columns]
                    writer.writerow([minute, *cells, seg.kind, seg.label])


def series_path(directory: Path, unit_id: str) -> Path:
    """``<instance_id>.csv``; a workload's ``<namespace>/<Kind>/<name>.csv``."""
    *folders, last = unit_id.split("/")
    return directory.joinpath(*folders, f"{last}.csv")


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def read_traces(
    directory: Path,
    *,
    price_of: Callable[[str], Decimal | None],
    threshold: float = 5.0,
    min_idle_minutes: int = 120,
) -> list[Trace]:
    """Traces in ``directory``; :class:`DataError` names file, line and column on error."""
    fleet_path = directory / FLEET_FILE
    if not directory.is_dir():
        raise DataError(str(directory), "not a folder of traces")
    if not fleet_path.is_file():
        rows = _fleet_without_file(directory)
    else:
        rows = _csv_rows(fleet_path, ("instance_id", "instance_type")).rows
    traces: list[Trace] = []
    for line, row in rows:
        instance_id = row["instance_id"].strip()
        instance_type = row["instance_type"].strip()
        workload = workload_parts(instance_id)
        plain = instance_id and "/" not in instance_id and not instance_id.startswith(".")
        if not plain and workload is None:
            raise DataError(
                str(fleet_path), f"not a usable instance id: {instance_id!r} (an instance "
                "id, or a Kubernetes workload as namespace/Kind/name)", line=line,
                field="instance_id",
            )  # fmt: skip
        price = _price(fleet_path, line, row.get("hourly_usd", ""))
        if price is None:
            price = price_of(instance_type)
        if price is None:
            raise DataError(
                str(fleet_path),
                f"no hourly_usd and no catalog price for {instance_type!r}",
                line=line,
                field="hourly_usd",
            )
        # a workload's series is <namespace>/<Kind>/<name>.csv (parts checked above)
        series = _read_series(series_path(directory, instance_id))
        kinds, labels = series.kinds, series.labels
        if not series.labelled:
            kinds = _derive_kinds(series.values, threshold, min_idle_minutes)
            labels = ["derived" for _ in series.values]
        traces.append(
            Trace(
                instance_id=instance_id,
                instance_type=instance_type,
                trace_class=(row.get("trace_class") or "unlabelled").strip(),
                hourly_usd=price,
                utilisation=tuple(series.values),
                segments=_segments(kinds, labels),
                memory=tuple(series.memory) if series.has_memory else None,
                cpu=tuple(series.cpu) if series.has_cpu else None,
                gpus=tuple(tuple(g) for g in series.gpus) if series.gpus else None,
            )
        )
    return traces


def _fleet_without_file(directory: Path) -> list[tuple[int, dict[str, str]]]:
    """No fleet.csv: every ``*.csv`` is one instance at $1/h (shares are then shares of
    instance-hours)."""
    names = sorted(p.stem for p in directory.glob("*.csv"))
    if not names:
        raise DataError(str(directory / FLEET_FILE), "not found, and no <instance_id>.csv")
    return [(0, {"instance_id": n, "instance_type": "unknown", "hourly_usd": "1"}) for n in names]


@dataclass
class _Table:
    header: list[str]
    rows: list[tuple[int, dict[str, str]]]


def _read_text(path: Path) -> str:
    return read_text(path, limit=TRACE_LIMIT, what="trace file")


def _csv_rows(path: Path, required: Sequence[str]) -> _Table:
    reader = csv.reader(_read_text(path).splitlines())
    try:
        header = [_ALIASES.get(h.strip().lower(), h.strip().lower()) for h in next(reader)]
        missing = [c for c in required if c not in header]
        if missing:
            raise DataError(str(path), f"header lacks column(s) {', '.join(missing)}", line=1)
        rows: list[tuple[int, dict[str, str]]] = []
        for cells in reader:
            if not any(c.strip() for c in cells):
                continue
            if len(cells) > len(header):
                raise DataError(
                    str(path), f"{len(cells)} cells, the header names {len(header)}",
                    line=reader.line_num, column=len(header) + 1,
                )  # fmt: skip
            rows.append((reader.line_num, dict(zip(header, cells, strict=False))))
    except StopIteration:
        raise DataError(str(path), "empty: expected a header line", line=1) from None
    except csv.Error as exc:
        raise DataError(str(path), f"not CSV: {exc}", line=reader.line_num) from None
    return _Table(header, rows)


@dataclass
class _Series:
    labelled: bool
    has_memory: bool
    has_cpu: bool
    values: list[float | None] = field(default_factory=list)
    memory: list[float | None] = field(default_factory=list)
    cpu: list[float | None] = field(default_factory=list)
    kinds: list[Kind] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    gpus: list[list[float | None]] = field(default_factory=list)

    def extend(self, minutes: int, row: _Row) -> None:
        for index, series in enumerate(self.gpus):
            value = row.gpus[index] if index < len(row.gpus) else None
            series.extend([value] * minutes)
        self.values.extend([row.utilisation] * minutes)
        self.memory.extend([row.memory] * minutes)
        self.cpu.extend([row.cpu] * minutes)
        self.kinds.extend([row.kind] * minutes)
        self.labels.extend([row.label] * minutes)


@dataclass(frozen=True)
class _Row:
    minute: int
    utilisation: float | None
    memory: float | None
    cpu: float | None
    kind: Kind
    label: str
    gpus: tuple[float | None, ...] = ()


def _gpu_columns(header: list[str]) -> list[str]:
    """``gpu0_utilisation``.. in index order, stopping at the first missing index."""
    names: list[str] = []
    while f"gpu{len(names)}_utilisation" in header:
        names.append(f"gpu{len(names)}_utilisation")
    return names


def _read_series(path: Path) -> _Series:
    table = _csv_rows(path, ("minute", "utilisation"))
    out = _Series(
        labelled="kind" in table.header,
        has_memory="gpu_memory_used_percent" in table.header,
        has_cpu="cpu_percent" in table.header,
        gpus=[[] for _ in _gpu_columns(table.header)],
    )
    rows = [_parse_row(path, table.header, line, row) for line, row in table.rows]
    if not rows:
        raise DataError(str(path), "no rows after the header", line=2)
    lines = [line for line, _ in table.rows]
    for index in range(1, len(rows)):
        if rows[index].minute <= rows[index - 1].minute:
            raise DataError(
                str(path), f"minutes must increase, got {rows[index].minute} after "
                f"{rows[index - 1].minute}", line=lines[index], column=_col(table.header, "minute"),
            )  # fmt: skip
    step = math.gcd(*(b.minute - a.minute for a, b in itertools.pairwise(rows))) or 1
    if step > MAX_STEP:
        raise DataError(
            str(path), f"rows must be 1 to {MAX_STEP} minutes apart, got {step}",
            line=lines[1], column=_col(table.header, "minute"),
        )  # fmt: skip
    if rows[0].minute:
        out.extend(rows[0].minute, _gap(rows[0]))
    for index, row in enumerate(rows):
        following = rows[index + 1].minute if index + 1 < len(rows) else row.minute + step
        gap = following - row.minute
        if gap <= 0 or gap % step:
            raise DataError(
                str(path),
                f"expected minute {row.minute + step} (rows every {step} min), got {following}",
                line=lines[index + 1],
                column=_col(table.header, "minute"),
            )
        out.extend(step, row)
        if gap > step:
            out.extend(gap - step, _gap(row))
    return out


def _gap(row: _Row) -> _Row:
    return _Row(row.minute, None, None, None, row.kind, row.label, (None,) * len(row.gpus))


def _parse_row(path: Path, header: list[str], line: int, row: dict[str, str]) -> _Row:
    def number(name: str, *, required: bool = False) -> float | None:
        cell = (row.get(name) or "").strip()
        if not cell:
            if required:
                raise DataError(str(path), "expected a number, got nothing", line=line,
                                column=_col(header, name), field=name)  # fmt: skip
            return None
        try:
            value = float(cell)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise DataError(str(path), f"expected a number, got {cell[:40]!r}", line=line,
                            column=_col(header, name), field=name)  # fmt: skip
        return value

    minute = number("minute", required=True)
    if minute is None or minute != int(minute) or not 0 <= minute <= MAX_MINUTES:
        raise DataError(
            str(path), f"expected a whole minute from 0 to {MAX_MINUTES}", line=line,
            column=_col(header, "minute"), field="minute",
        )  # fmt: skip
    kind_text = (row.get("kind") or "").strip().lower()
    if "kind" in header and kind_text not in ("busy", "idle"):
        raise DataError(
            str(path), f"expected busy or idle, got {kind_text[:40]!r}", line=line,
            column=_col(header, "kind"), field="kind",
        )  # fmt: skip
    kind: Kind = "idle" if kind_text == "idle" else "busy"
    return _Row(
        minute=int(minute),
        utilisation=_percent(number("utilisation")),
        memory=_percent(number("gpu_memory_used_percent")),
        cpu=_percent(number("cpu_percent")),
        kind=kind,
        label=((row.get("label") or kind_text).strip())[:200],
        gpus=tuple(_percent(number(name)) for name in _gpu_columns(header)),
    )


def _percent(value: float | None) -> float | None:
    return None if value is None else min(100.0, max(0.0, value))


def _col(header: list[str], name: str) -> int:
    return header.index(name) + 1 if name in header else 1


def _derive_kinds(values: Sequence[float | None], threshold: float, min_idle: int) -> list[Kind]:
    kinds: list[Kind] = ["busy"] * len(values)
    start = None
    for minute, value in enumerate([*values, 100.0]):
        low = value is not None and value < threshold
        if low and start is None:
            start = minute
        elif not low and start is not None:
            if minute - start >= min_idle:
                kinds[start:minute] = ["idle"] * (minute - start)
            start = None
    return kinds


def _segments(kinds: Sequence[Kind], labels: Sequence[str]) -> tuple[Segment, ...]:
    segments: list[Segment] = []
    for minute, (kind, label) in enumerate(zip(kinds, labels, strict=True)):
        last = segments[-1] if segments else None
        if last is not None and last.kind == kind and last.label == label:
            segments[-1] = Segment(last.start, minute + 1, kind, label)
        else:
            segments.append(Segment(minute, minute + 1, kind, label))
    return tuple(segments)


def _price(path: Path, line: int, cell: str) -> Decimal | None:
    text = (cell or "").strip()
    if not text:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise DataError(
            str(path), f"expected USD per hour, got {text[:40]!r}", line=line, field="hourly_usd"
        ) from None
    if not value.is_finite() or value <= 0 or value > 100_000:
        raise DataError(
            str(path), f"must be above 0 and at most 100000, got {text[:40]}", line=line,
            field="hourly_usd",
        )  # fmt: skip
    return value
