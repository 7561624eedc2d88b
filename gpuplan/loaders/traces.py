"""Reads and writes utilisation trace folders for the idle-savings simulator.

Format (a folder; documented in docs/simulation.md so teams can feed their own exports):

- ``fleet.csv``: ``instance_id,instance_type,trace_class,hourly_usd`` (hourly_usd may
  be empty: the on-demand catalog price of instance_type in us-east-1 is used);
- ``<instance_id>.csv`` per instance: ``minute,utilisation[,kind,label]``: the busiest
  GPU's utilisation in percent for each minute from 0 (empty = not every GPU reported),
  and optionally the truth label ``busy`` / ``idle`` plus a free-text label.

Without ``kind``, labels are derived: a run of minutes below ``threshold`` percent that
lasts at least ``min_idle_minutes`` is idle, everything else busy (state this when
reporting: the oracles then share the simulator's own notion of idle).
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from pathlib import Path

from gpuplan.core.errors import DataError
from gpuplan.core.simulation.traces import Kind, Segment, Trace
from gpuplan.loaders.safe_read import TRACE_LIMIT, read_text

FLEET_FILE = "fleet.csv"


def write_traces(directory: Path, traces: Sequence[Trace]) -> None:
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
        with (directory / f"{t.instance_id}.csv").open("w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(["minute", "utilisation", "kind", "label"])
            for seg in t.segments:
                for minute in range(seg.start, seg.end):
                    value = t.utilisation[minute]
                    writer.writerow(
                        [minute, "" if value is None else f"{value:g}", seg.kind, seg.label]
                    )


def read_traces(
    directory: Path,
    *,
    price_of: Callable[[str], Decimal | None],
    threshold: float = 5.0,
    min_idle_minutes: int = 120,
) -> list[Trace]:
    """Traces in ``directory``; :class:`DataError` names file, line and field on error."""
    fleet_path = directory / FLEET_FILE
    if not fleet_path.is_file():
        raise DataError(str(fleet_path), "not found: a trace folder needs fleet.csv")
    traces: list[Trace] = []
    for line, row in _csv_rows(fleet_path, ("instance_id", "instance_type")):
        instance_id = row["instance_id"].strip()
        instance_type = row["instance_type"].strip()
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
        values, kinds, labels = _read_series(directory / f"{instance_id}.csv")
        if kinds is None:
            kinds = _derive_kinds(values, threshold, min_idle_minutes)
            labels = ["derived" for _ in values]
        traces.append(
            Trace(
                instance_id=instance_id,
                instance_type=instance_type,
                trace_class=(row.get("trace_class") or "unlabelled").strip(),
                hourly_usd=price,
                utilisation=tuple(values),
                segments=_segments(kinds, labels),
            )
        )
    return traces


def _csv_rows(path: Path, required: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    text = read_text(path, limit=TRACE_LIMIT, what="trace file")
    reader = csv.DictReader(text.splitlines())
    missing = [c for c in required if c not in (reader.fieldnames or [])]
    if missing:
        raise DataError(str(path), f"header lacks column(s) {', '.join(missing)}", line=1)
    return [(index + 2, row) for index, row in enumerate(reader)]


def _read_series(path: Path) -> tuple[list[float | None], list[Kind] | None, list[str]]:
    rows = _csv_rows(path, ("minute", "utilisation"))
    values: list[float | None] = []
    kinds: list[Kind] = []
    labels: list[str] = []
    has_kind = bool(rows) and "kind" in rows[0][1]
    for line, row in rows:
        if int(_number(path, line, "minute", row["minute"])) != len(values):
            raise DataError(str(path), f"expected minute {len(values)}", line=line, field="minute")
        cell = row["utilisation"].strip()
        values.append(None if not cell else _number(path, line, "utilisation", cell))
        if has_kind:
            kind = (row.get("kind") or "").strip()
            if kind not in ("busy", "idle"):
                raise DataError(
                    str(path), f"expected busy or idle, got {kind!r}", line=line, field="kind"
                )
            kinds.append("busy" if kind == "busy" else "idle")
            labels.append((row.get("label") or kind).strip())
    return values, (kinds if has_kind else None), labels


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


MAX_CELL = 10_000_000.0
"""Minutes and utilisation percents: far above any real trace, far below float trouble."""
MAX_HOURLY_USD = Decimal(100_000)


def _number(path: Path, line: int, field: str, cell: str) -> float:
    try:
        value = float(cell)
    except ValueError:
        raise DataError(
            str(path), f"expected a number, got {cell[:40]!r}", line=line, field=field
        ) from None
    if not 0 <= value <= MAX_CELL:  # also refuses nan and inf
        raise DataError(
            str(path),
            f"expected a number from 0 to {MAX_CELL:g}, got {cell[:40]!r}",
            line=line,
            field=field,
        )
    return value


def _price(path: Path, line: int, cell: str) -> Decimal | None:
    text = (cell or "").strip()
    if not text:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise DataError(
            str(path), f"expected USD per hour, got {text!r}", line=line, field="hourly_usd"
        ) from None
    if not value.is_finite() or not 0 < value <= MAX_HOURLY_USD:
        raise DataError(
            str(path),
            f"expected USD per hour above 0 and at most {MAX_HOURLY_USD}, got {text[:40]!r}",
            line=line,
            field="hourly_usd",
        )
    return value
