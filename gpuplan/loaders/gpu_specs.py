"""Reads the GPU spec table (``pricing/gpus.toml``) into a :class:`GpuTable`."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from gpuplan.core.catalog.gpus import GpuSpec, GpuTable
from gpuplan.core.catalog.provider_values import gpu_spec_problem
from gpuplan.core.errors import DataError
from gpuplan.loaders.safe_read import CATALOG_LIMIT, read_text

GPU_FILE = "gpus.toml"
_SPEC = TypeAdapter(GpuSpec)


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
            specs.append(_SPEC.validate_python(entry))
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            raise DataError(str(path), err["msg"], field=f"gpu[{label}].{loc}") from None
        found = gpu_spec_problem(entry)
        if found is not None:  # the same ranges as every other catalog number
            line = _line_of(text, str(label), found[0])
            raise DataError(str(path), found[1], line=line, field=f"gpu[{label}].{found[0]}")
    try:
        return GpuTable(specs)
    except ValueError as exc:
        raise DataError(str(path), str(exc)) from None


def _line_of(text: str, name: str, key: str) -> int | None:
    """The line of ``key =`` in the ``[[gpu]]`` entry named ``name`` (tomllib keeps no places)."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.replace(" ", "") == f'name="{name}"'), None)
    if start is None:
        return None
    for index in range(start, len(lines)):
        stripped = lines[index].strip()
        if index > start and stripped.startswith("[[gpu]]"):
            return None
        if stripped.split("=", 1)[0].strip() == key:
            return index + 1
    return None
