"""A fast reader of the catalog files for ``gpuplan estimate``: no pydantic on the way.

The validated reader (:mod:`gpuplan.loaders.catalog_files`, :mod:`gpuplan.loaders.gpu_specs`)
validates through pydantic; importing pydantic and validating costs more than the whole
estimate. This reader parses the same files with the standard library and builds the
same rows directly (:class:`~gpuplan.core.catalog.offers.Offer`,
:class:`~gpuplan.core.catalog.gpus.GpuSpec`: plain frozen dataclasses, one definition).

It accepts only the plainly well-formed: plain decimal numbers, ISO dates, known
columns, no duplicates, prices inside the validated bounds. Anything else raises
:class:`NotFast`, and the caller reads the file with the validated reader instead, so a
bad file gets exactly the validated reader's error. ``tests/loaders/test_fast_catalog.py``
checks that both readers give the same offers and GPUs for the bundled catalog.
"""

from __future__ import annotations

import csv
import io
import re
import tomllib
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from gpuplan.core.catalog.gpus import GpuSpec, GpuTable
from gpuplan.core.catalog.kinds import PricingModel, Provider, whole_count
from gpuplan.core.catalog.offers import Offer, PriceParts
from gpuplan.core.catalog.provider_values import OFFER_SHAPE, gpu_spec_problem, offer_problem
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

MODELS = tuple(PricingModel)
COLUMNS = {m: price_columns(m) for m in MODELS}
_INT = re.compile(r"[0-9]{1,9}")
_FLOAT = re.compile(r"[0-9]{1,9}(\.[0-9]{1,12})?")
_PRICE = re.compile(r"[0-9]{1,6}(\.[0-9]{1,12})?")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class NotFast(Exception):
    """The file needs the validated reader (it may be bad, or merely unusual)."""


_GPU_STR = ("name", "vendor", "architecture", "form_factor", "interconnect", "source")
_GPU_FLOAT = ("memory_gb", "memory_bandwidth_tbs")
_GPU_OPT = (
    "fp32_tflops", "tf32_tflops", "bf16_tflops", "fp16_tflops", "fp8_tflops", "fp4_tflops",
    "bf16_matmul_tflops",
)  # fmt: skip
_GPU_KEYS = frozenset(
    (*_GPU_STR, *_GPU_FLOAT, *_GPU_OPT, "launch_year", "interconnect_gbs", "nvlink_domain")
)


def read_gpus(path: Path) -> GpuTable:
    """The GPU table of ``gpus.toml``; :class:`NotFast` for anything unusual."""
    try:
        data = read_bytes(path, limit=CATALOG_LIMIT, what="GPU table")
        raw = tomllib.loads(data.decode("utf-8"))
    except (DataError, ValueError, RecursionError):  # the validated reader says what is wrong
        raise NotFast(str(path)) from None
    entries = raw.get("gpu")
    if not isinstance(entries, list) or not entries:
        raise NotFast(str(path))
    rows = [_gpu_row(entry) for entry in entries]
    try:
        return GpuTable(rows)
    except ValueError:
        raise NotFast(str(path)) from None


def _gpu_row(entry: Any) -> GpuSpec:
    if not isinstance(entry, dict) or not set(entry) <= _GPU_KEYS | {"aliases"}:
        raise NotFast("unusual [[gpu]] entry")
    if gpu_spec_problem(entry) is not None:
        raise NotFast("range")
    values: dict[str, Any] = {}
    for key in _GPU_STR:
        if not isinstance(entry.get(key), str):
            raise NotFast(key)
        values[key] = entry[key]
    for key in (*_GPU_FLOAT, *_GPU_OPT, "interconnect_gbs"):
        value = entry.get(key)
        if value is None and key not in _GPU_FLOAT:
            values[key] = None
        elif isinstance(value, int | float) and not isinstance(value, bool):
            values[key] = float(value)
        else:
            raise NotFast(key)
    domain = entry.get("nvlink_domain")
    if domain is not None and type(domain) is not int:
        raise NotFast("nvlink_domain")
    values["nvlink_domain"] = domain
    year = entry.get("launch_year")
    aliases = entry.get("aliases", [])
    if type(year) is not int or not isinstance(aliases, list):
        raise NotFast("launch_year/aliases")
    if not all(isinstance(a, str) for a in aliases):
        raise NotFast("aliases")
    return GpuSpec(launch_year=year, aliases=tuple(aliases), **values)


def read_offers(
    path: Path, provider: Provider, gpus: GpuTable, origin: str
) -> tuple[list[Offer], list[str]]:
    """Offers and notices of one provider file; :class:`NotFast` for anything unusual."""
    try:
        text = read_bytes(path, limit=CATALOG_LIMIT, what="catalog file").decode("utf-8")
    except (DataError, UnicodeDecodeError):
        raise NotFast(str(path)) from None
    if "\x00" in text:
        raise NotFast(str(path))
    try:
        table = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    except csv.Error:
        raise NotFast(str(path)) from None
    if not table:
        raise NotFast(str(path))
    header = table[0]
    _check_header(header)
    offers: list[Offer] = []
    seen: set[tuple[str, str, str]] = set()
    spot_lines: list[int] = []
    known = set(gpus.names)
    for line, cells in enumerate(table[1:], start=2):
        if len(cells) != len(header) or "\n" in "".join(cells) or "\r" in "".join(cells):
            raise NotFast(f"line {line}")  # multi-line cells: line numbers need the validator
        offer = _offer(dict(zip(header, cells, strict=True)), provider, known, origin)
        if offer.key in seen:
            raise NotFast(f"line {line}")
        seen.add(offer.key)
        od, spot = offer.on_demand_hourly, offer.spot_hourly
        if spot is not None and od is not None and spot >= od:
            spot_lines.append(line)
        offers.append(offer)
    return offers, _spot_notice(str(path), spot_lines)


def _check_header(header: list[str]) -> None:
    known = known_columns()
    needed = set(REQUIRED)
    if len(set(header)) != len(header) or not needed <= set(header) or not set(header) <= known:
        raise NotFast("header")


def _offer(row: dict[str, str], provider: Provider, known: set[str], origin: str) -> Offer:
    cell = {k: v.strip() for k, v in row.items()}
    if cell["gpu"] not in known or not cell["instance_type"] or not cell["region"]:
        raise NotFast("gpu/instance_type/region")
    prices, parts = _prices(row, cell)
    if not any(p is not None for p in prices.values()):
        raise NotFast("no price")
    count = whole_count(_float(cell["gpu_count"]))
    if count <= 0:
        raise NotFast("gpu_count")
    network = cell.get("network_gbps", "")
    shape = {c: cell.get(c) or None for c in OFFER_SHAPE}
    if offer_problem(shape, {m.value: prices[m] for m in MODELS}) is not None:
        raise NotFast("range")  # the validated reader names file, line, field and range
    as_of = _date(cell["as_of"])
    dates = {m: _date(cell[c]) for m, c in _DATE_COLUMNS if cell.get(c)}
    return Offer(
        provider=provider,
        instance_type=cell["instance_type"],
        region=cell["region"],
        gpu=cell["gpu"],
        gpu_count=count,
        gpu_memory_gb=_float(cell["gpu_memory_gb"]),
        vcpus=_int(cell["vcpus"]),
        memory_gb=_float(cell["memory_gb"]),
        interconnect=cell.get("interconnect") or "",
        network_gbps=_float(network) if network else None,
        spot_zone=cell.get("spot_zone") or None,
        parts=parts or None,
        as_of=as_of,
        dates=dates or None,
        source=cell["source"],
        origin=origin,
        **{name: prices[m] for m, name in _PRICE_FIELDS},
    )


_PRICE_FIELDS = tuple((m, f"{m.value}_hourly") for m in MODELS)
_DATE_COLUMNS = tuple((m, date_column(m)) for m in MODELS)


def _date(text: str) -> date:
    if not _DATE.fullmatch(text):
        raise NotFast("date")
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise NotFast("date") from None


def _prices(
    row: dict[str, str], cell: dict[str, str]
) -> tuple[dict[PricingModel, Decimal | None], dict[PricingModel, PriceParts]]:
    prices: dict[PricingModel, Decimal | None] = {}
    parts: dict[PricingModel, PriceParts] = {}
    for model, (total_col, host_col, gpu_col) in COLUMNS.items():
        text, host_text, gpu_text = cell.get(total_col), cell.get(host_col), cell.get(gpu_col)
        total = _price(text) if text else None
        if not (host_text or gpu_text):  # most rows: one total or nothing (a third of the load)
            prices[model] = total
            continue
        host = _price(host_text) if host_text else None
        gpu = _price(gpu_text) if gpu_text else None
        if total is not None and (host is not None or gpu is not None):
            raise NotFast(total_col)
        if (host is None) != (gpu is None):
            raise NotFast(host_col)
        if host is not None and gpu is not None:
            parts[model] = PriceParts(host=host, accelerators=gpu)
            total = host + gpu
        prices[model] = total
    return prices, parts


def _price(text: str) -> Decimal | None:
    if not text:
        return None
    if not _PRICE.fullmatch(text):
        raise NotFast(text)
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise NotFast(text) from None
    if value <= 0 or value in PLACEHOLDER_PRICES or value > MAX_PLAUSIBLE_HOURLY:
        raise NotFast(text)
    return value


def _float(text: str) -> float:
    if not _FLOAT.fullmatch(text):
        raise NotFast(text)
    return float(text)


def _int(text: str) -> int:
    if not _INT.fullmatch(text):
        raise NotFast(text)
    return int(text)


def _spot_notice(name: str, spot_lines: list[int]) -> list[str]:
    """The validated reader's notice for spot at or above on-demand, word for word."""
    if not spot_lines:
        return []
    shown = ", ".join(str(n) for n in spot_lines[:8]) + (" ..." if len(spot_lines) > 8 else "")
    return [
        f"{name}: {plural(len(spot_lines), 'offer')} with spot >= on-demand (lines {shown}); "
        "spot capacity may be unavailable there"
    ]
