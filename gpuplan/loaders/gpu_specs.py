"""Reads the GPU spec table (``pricing/gpus.toml``) into a :class:`GpuTable`."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import ValidationError

from gpuplan.core.errors import DataError
from gpuplan.core.gpus import GpuSpec, GpuTable
from gpuplan.loaders.safe_read import CATALOG_LIMIT, read_text

GPU_FILE = "gpus.toml"


def load_gpu_table(directory: Path) -> GpuTable:
    """The GPU table in ``directory``; :class:`DataError` names the file and entry on error."""
    path = directory / GPU_FILE
    text = read_text(path, limit=CATALOG_LIMIT, what="GPU table")
    try:
        raw = tomllib.loads(text)
    except (ValueError, RecursionError) as exc:
        # TOMLDecodeError is a ValueError; so is the integer digit limit (a 5,000-digit
        # number), which tomllib lets through as a plain ValueError.
        reason = str(exc).split(";")[0][:200]
        raise DataError(str(path), f"not valid TOML: {reason}") from None
    entries = raw.get("gpu")
    if not isinstance(entries, list):
        raise DataError(str(path), "expected a list of [[gpu]] tables")
    specs: list[GpuSpec] = []
    for index, entry in enumerate(entries):
        label = entry.get("name", f"#{index + 1}") if isinstance(entry, dict) else f"#{index + 1}"
        try:
            specs.append(GpuSpec.model_validate(entry))
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            raise DataError(str(path), err["msg"], field=f"gpu[{label}].{loc}") from None
    try:
        return GpuTable(specs)
    except ValueError as exc:
        raise DataError(str(path), str(exc)) from None
