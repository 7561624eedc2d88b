"""Writes offers back in the catalog CSV format, atomically, into a catalog folder.

The file is written to a temporary name in the same folder, flushed to disk, then
renamed over the old one, so a reader sees the old file or the new one, never half.
What is written reads back through :func:`gpuplan.loaders.catalog_files.load_provider_file`
to the same offers (prices are written exactly as the Decimals they are).

GCP files carry ``host_`` and ``gpu_`` price parts where offers have them, as the
bundled file does, and a total column for a pricing model where some offer has only the
total (AWS and Azure: totals only). Block-sold pricing models (capacity blocks, DWS) get
columns only when an offer is sold that way.
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

from gpuplan.core.catalog.offers import BASE_MODELS, Offer, PricingModel, Provider
from gpuplan.core.clouds import facts_of
from gpuplan.loaders.catalog_columns import TAIL, WRITTEN_SHAPE, date_column, price_columns


def provider_csv(offers: Sequence[Offer]) -> str:
    """The CSV text for one provider's offers, sorted by instance type then region."""
    layout = _layout(offers)
    price_cols: list[str] = []
    for model, (parted, whole) in layout.items():
        total, host, gpu = price_columns(model)
        if parted:
            price_cols += [host, gpu]
        if whole:
            price_cols.append(total)
    dated = [m for m in PricingModel if any(m in (o.dates or {}) for o in offers)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*WRITTEN_SHAPE, *price_cols, *(date_column(m) for m in dated), *TAIL])
    for offer in sorted(offers, key=lambda o: (o.instance_type, o.region)):
        days = (offer.dates or {}).get
        writer.writerow(
            _row(offer, layout, [d.isoformat() if (d := days(m)) else "" for m in dated])
        )
    return out.getvalue()


def _layout(offers: Sequence[Offer]) -> dict[PricingModel, tuple[bool, bool]]:
    """Per pricing model written: (host and GPU part columns, a total column).

    The four base models are always written; block-sold ones only when an offer has them.
    Parts are written where offers carry them; a total column where some priced offer has
    no parts (or nothing has parts), so every price reads back the same.
    """
    layout: dict[PricingModel, tuple[bool, bool]] = {}
    any_parts = any(o.parts for o in offers)
    for model in PricingModel:
        priced = [o for o in offers if o.price(model) is not None]
        if not priced:
            if model in BASE_MODELS:  # an unsold base model keeps the file's usual columns
                layout[model] = (any_parts, not any_parts)
            continue
        parted = any(model in (o.parts or {}) for o in priced)
        whole = not parted or any(model not in (o.parts or {}) for o in priced)
        layout[model] = (parted, whole)
    return layout


def _row(offer: Offer, layout: dict[PricingModel, tuple[bool, bool]], days: list[str]) -> list[str]:
    cells = [
        offer.instance_type,
        offer.region,
        offer.gpu,
        _number(offer.gpu_count),
        _number(offer.gpu_memory_gb),
        str(offer.vcpus),
        _number(offer.memory_gb),
        offer.interconnect,
        "" if offer.network_gbps is None else _number(offer.network_gbps),
    ]
    for model, (parted, whole) in layout.items():
        part = (offer.parts or {}).get(model)
        if parted:
            cells += [
                _money(part.host if part else None),
                _money(part.accelerators if part else None),
            ]
        if whole:
            cells.append(_money(None if part and parted else offer.price(model)))
    cells += [*days, offer.spot_zone or "", offer.as_of.isoformat(), offer.source]
    return cells


def _money(value: Decimal | None) -> str:
    return "" if value is None else format(value.normalize(), "f")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def write_provider_file(directory: Path, provider: Provider, offers: Sequence[Offer]) -> Path:
    """Atomically replace the provider's catalog file (its entry's ``catalog_file``) in
    ``directory`` with ``offers``; returns the path."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # files: mkstemp's 0600
    target = directory / facts_of(provider).catalog_file
    text = provider_csv(offers)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return target
