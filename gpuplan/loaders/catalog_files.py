"""Reads the per-provider catalog CSVs in ``pricing/`` into validated offers.

File format (one file per provider, ``aws.csv``, ``gcp.csv``, ``azure.csv``): a header
row, then one offer per row. Price columns are ``<model>_hourly`` for each pricing
model (on_demand, spot, reserved_1y, reserved_3y, and the block-sold capacity_block,
flex_start, dws_calendar; absent columns mean "not sold that way"); a provider that bills
host and GPUs apart (GCP) gives ``host_<model>_hourly`` and ``gpu_<model>_hourly``
instead, and the offer's price is their sum; a row may still give the total alone where
only that is published. An empty price cell means "not sold that way here".

Rejected on load, with file, line and field: zero, negative or placeholder prices, and
any price or spec value outside the range ``catalog refresh`` accepts
(:func:`gpuplan.core.catalog.provider_values.offer_problem`: NaN, 1e-300 per GPU-hour, -1 vCPUs,
1e20 GPUs, the range in the message), duplicate (provider, instance_type, region),
unknown GPU names, unparsable cells.
Reported as notices (not errors): spot at or above on-demand, stale data.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from gpuplan.core.catalog.gpus import GpuTable
from gpuplan.core.catalog.offers import Offer, PriceParts, PricingModel, Provider
from gpuplan.core.catalog.provider_values import OFFER_SHAPE, offer_problem
from gpuplan.core.errors import DataError
from gpuplan.core.wording import plural
from gpuplan.loaders.catalog_columns import (
    MAX_PLAUSIBLE_HOURLY,
    PLACEHOLDER_PRICES,
    REQUIRED,
    date_column,
    known_columns,
    price_columns,
)
from gpuplan.loaders.safe_read import CATALOG_LIMIT, read_bytes

_OFFER = TypeAdapter(Offer)
"""Validates a row's cells into the one :class:`Offer` type (the fast reader builds it
directly)."""


@dataclass(frozen=True)
class LoadedFile:
    offers: list[Offer]
    notices: list[str]
    as_of: date | None


def load_provider_file(path: Path, provider: Provider, gpus: GpuTable) -> LoadedFile:
    """Offers of one provider file, or :class:`DataError` at the first bad cell."""
    name = str(path)
    try:
        text = read_bytes(path, limit=CATALOG_LIMIT, what="catalog file").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(name, f"not UTF-8 text (byte {exc.start})") from None
    if "\x00" in text:
        raise DataError(name, "binary data, not CSV text")
    rows = _rows(name, text)
    try:
        line, header = next(rows)
    except StopIteration:
        raise DataError(name, "empty file: expected a CSV header row") from None
    _check_header(name, line, header)
    offers: list[Offer] = []
    seen: dict[tuple[str, str, str], int] = {}
    spot_lines: list[int] = []
    for line, cells in rows:
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            raise DataError(
                name, f"expected {len(header)} cells as in the header, got {len(cells)}", line=line
            )
        row = dict(zip(header, cells, strict=True))
        offer = _offer(name, line, row, provider, gpus)
        if offer.key in seen:
            raise DataError(
                name,
                f"duplicate offer {offer.instance_type} in {offer.region} "
                f"(first on line {seen[offer.key]})",
                line=line,
                field="instance_type",
            )
        seen[offer.key] = line
        if (
            offer.spot_hourly is not None
            and offer.on_demand_hourly is not None
            and offer.spot_hourly >= offer.on_demand_hourly
        ):
            spot_lines.append(line)
        offers.append(offer)
    notices = []
    if spot_lines:
        shown = ", ".join(str(n) for n in spot_lines[:8]) + (" ..." if len(spot_lines) > 8 else "")
        notices.append(
            f"{name}: {plural(len(spot_lines), 'offer')} with spot >= on-demand (lines {shown}); "
            "spot capacity may be unavailable there"
        )
    as_of = min((o.as_of for o in offers), default=None)
    return LoadedFile(offers=offers, notices=notices, as_of=as_of)


def _rows(name: str, text: str) -> Iterator[tuple[int, list[str]]]:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise DataError(name, f"malformed CSV: {exc}", line=reader.line_num) from None
        yield reader.line_num, cells


def _check_header(name: str, line: int, header: list[str]) -> None:
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise DataError(name, f"header lacks column(s) {', '.join(missing)}", line=line)
    dupes = {c for c in header if header.count(c) > 1}
    if dupes:
        raise DataError(name, f"header repeats column(s) {', '.join(sorted(dupes))}", line=line)
    known = known_columns()
    unknown = [c for c in header if c not in known]
    if unknown:
        raise DataError(name, f"unknown column(s) {', '.join(unknown)}", line=line)


def _offer(name: str, line: int, row: dict[str, str], provider: Provider, gpus: GpuTable) -> Offer:
    gpu_cell = row["gpu"].strip()
    if gpu_cell not in gpus:
        spec = gpus.lookup(gpu_cell)
        hint = f"write the canonical name {spec.name!r}" if spec else _gpu_hint(gpus, gpu_cell)
        raise DataError(name, f"unknown GPU {gpu_cell!r}; {hint}", line=line, field="gpu")
    values: dict[str, object] = {
        "provider": provider,
        "instance_type": row["instance_type"].strip(),
        "region": row["region"].strip(),
        "gpu": gpu_cell,
        "source": row["source"].strip(),
    }
    for col in ("gpu_count", "gpu_memory_gb", "vcpus", "memory_gb", "network_gbps", "as_of"):
        cell = row.get(col, "").strip()
        if cell:
            values[col] = cell
    for col in ("interconnect", "spot_zone"):
        cell = row.get(col, "").strip()
        if cell:
            values[col] = cell
    parts: dict[PricingModel, PriceParts] = {}
    for pricing in PricingModel:
        total_col, host_col, gpu_col = price_columns(pricing)
        total = _price(name, line, total_col, row.get(total_col, ""))
        if total is not None and (row.get(host_col, "").strip() or row.get(gpu_col, "").strip()):
            why = "give the total or the host and GPU parts, not both"
            raise DataError(name, why, line=line, field=total_col)
        if total is not None or host_col not in row:
            # A total cell wins; a file may mix totals and parts (a price sold as one figure,
            # e.g. a commitment rate published only for the whole machine).
            values[total_col] = total
            continue
        host = _price(name, line, host_col, row.get(host_col, ""))
        gpu = _price(name, line, gpu_col, row.get(gpu_col, ""))
        if (host is None) != (gpu is None):
            missing = gpu_col if gpu is None else host_col
            raise DataError(
                name, "host and GPU parts go together; this one is empty", line=line, field=missing
            )
        if host is not None and gpu is not None:
            parts[pricing] = PriceParts(host=host, accelerators=gpu)
            values[total_col] = host + gpu
    if parts:
        values["parts"] = parts
    dates = {
        m.value: row[date_column(m)].strip()
        for m in PricingModel
        if row.get(date_column(m), "").strip()
    }
    if dates:
        values["dates"] = dates
    try:
        offer = _OFFER.validate_python(values)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or None
        got = err.get("input")
        raise DataError(name, f"{err['msg']}, got {got!r}", line=line, field=field) from None
    return _check_offer(name, line, offer)


def _check_offer(name: str, line: int, offer: Offer) -> Offer:
    # The range checks ``catalog refresh`` applies, for every file: NaN, 1e20 GPUs,
    # -1 vCPUs or $1e-300 would otherwise be ranked and priced.
    shape = {column: getattr(offer, column) for column in OFFER_SHAPE}
    prices = {price_columns(p)[0]: offer.price(p) for p in PricingModel}
    found = offer_problem(shape, prices)
    if found is not None:
        raise DataError(name, found[1], line=line, field=found[0])
    if not offer.instance_type or not offer.region:
        raise DataError(name, "instance_type and region must not be empty", line=line)
    if all(offer.price(p) is None for p in PricingModel):
        raise DataError(
            name, "no price at all: give at least one", line=line, field="on_demand_hourly"
        )
    return offer


def _price(name: str, line: int, column: str, cell: str) -> Decimal | None:
    text = cell.strip()
    if not text:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise DataError(
            name, f"expected a price in USD per hour, got {text!r}", line=line, field=column
        ) from None
    if not value.is_finite() or value <= 0:
        raise DataError(
            name,
            f"must be a positive price (leave the cell empty when not sold), got {text}",
            line=line,
            field=column,
        )
    if value in PLACEHOLDER_PRICES or value > MAX_PLAUSIBLE_HOURLY:
        raise DataError(
            name, f"looks like a placeholder, not a list price: {text}", line=line, field=column
        )
    return value


def _gpu_hint(gpus: GpuTable, cell: str) -> str:
    try:
        gpus.resolve(cell)
    except Exception as exc:  # resolve raises InputError with the suggestion text we want
        text = str(exc)
        return text.split("; ", 1)[1] if "; " in text else text
    return ""
