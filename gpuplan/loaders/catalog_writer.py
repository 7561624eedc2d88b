"""Writes offers back in the catalog CSV format, atomically, into a catalog folder.

The file is written to a temporary name in the same folder, flushed to disk, then
renamed over the old one, so a reader sees the old file or the new one, never half.
What is written reads back through :func:`gpuplan.loaders.catalog_files.load_provider_file`
to the same offers (prices are written exactly as the Decimals they are).

GCP files carry ``host_`` and ``gpu_`` price parts when every offer has them, as the
bundled file does; otherwise (and for AWS and Azure) one total column per pricing model.
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

from gpuplan.core.offers import Offer, PricingModel, Provider

SHAPE_COLUMNS = (
    "instance_type",
    "region",
    "gpu",
    "gpu_count",
    "gpu_memory_gb",
    "vcpus",
    "memory_gb",
    "interconnect",
    "network_gbps",
)
TAIL_COLUMNS = ("spot_zone", "as_of", "source")
FILE_NAMES = {Provider.AWS: "aws.csv", Provider.GCP: "gcp.csv", Provider.AZURE: "azure.csv"}


def provider_csv(offers: Sequence[Offer]) -> str:
    """The CSV text for one provider's offers, sorted by instance type then region."""
    with_parts = bool(offers) and all(_fully_parted(o) for o in offers)
    price_cols: list[str] = []
    for model in PricingModel:
        if with_parts:
            price_cols += [f"host_{model.value}_hourly", f"gpu_{model.value}_hourly"]
        else:
            price_cols.append(f"{model.value}_hourly")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*SHAPE_COLUMNS, *price_cols, *TAIL_COLUMNS])
    for offer in sorted(offers, key=lambda o: (o.instance_type, o.region)):
        writer.writerow(_row(offer, with_parts))
    return out.getvalue()


def _fully_parted(offer: Offer) -> bool:
    parts = offer.parts or {}
    return bool(parts) and all(offer.price(m) is None or m in parts for m in PricingModel)


def _row(offer: Offer, with_parts: bool) -> list[str]:
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
    for model in PricingModel:
        if with_parts:
            part = (offer.parts or {}).get(model)
            cells += [
                _money(part.host if part else None),
                _money(part.accelerators if part else None),
            ]
        else:
            cells.append(_money(offer.price(model)))
    cells += [offer.spot_zone or "", offer.as_of.isoformat(), offer.source]
    return cells


def _money(value: Decimal | None) -> str:
    return "" if value is None else format(value.normalize(), "f")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(value)


def write_provider_file(directory: Path, provider: Provider, offers: Sequence[Offer]) -> Path:
    """Atomically replace ``directory/<provider>.csv`` with ``offers``; returns the path."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)  # files: mkstemp's 0600
    target = directory / FILE_NAMES[provider]
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
