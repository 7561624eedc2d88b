"""GPU name resolution: the :class:`GpuTable`, free of pydantic.

A :class:`GpuTable` maps every spelling people use (``h100-sxm``, ``nvidia-h100-80gb``,
GCP's ``nvidia-tesla-a100``) to exactly one canonical name. ``H100`` is the SXM 80 GB
part and never silently includes the PCIe or NVL parts. It holds
:class:`~gpuplan.core.catalog.gpus.GpuSpec` values; it needs only their ``name`` and ``aliases``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from gpuplan.core.errors import InputError

if TYPE_CHECKING:
    from gpuplan.core.catalog.gpus import GpuSpec

# Bare names that could mean two different parts: refuse to guess.
AMBIGUOUS: dict[str, tuple[str, ...]] = {
    "a100": ("A100-40GB", "A100-80GB"),
    "v100": ("V100-16GB", "V100-32GB"),
}

_PREFIXES = ("nvidia-", "amd-")


def normalize_gpu_name(name: str) -> str:
    """Lower-case, unify separators, drop a vendor prefix: ``NVIDIA H100_80GB`` -> ``h100-80gb``."""
    key = re.sub(r"[\s_]+", "-", name.strip().lower())
    key = re.sub(r"-+", "-", key)
    changed = True
    while changed:
        changed = False
        for prefix in _PREFIXES:
            if key.startswith(prefix) and len(key) > len(prefix):
                key = key[len(prefix) :]
                changed = True
    return key


class GpuTable:
    """The GPU spec table with case-insensitive, alias-aware lookup."""

    def __init__(self, specs: Iterable[GpuSpec]) -> None:
        self._specs: dict[str, GpuSpec] = {}
        self._index: dict[str, str] = {}
        for spec in specs:
            if spec.name in self._specs:
                raise ValueError(f"duplicate GPU name {spec.name}")
            self._specs[spec.name] = spec
            for spelling in (spec.name, *spec.aliases):
                key = normalize_gpu_name(spelling)
                owner = self._index.get(key)
                if owner is not None and owner != spec.name:
                    raise ValueError(f"alias {spelling!r} claimed by {owner} and {spec.name}")
                self._index[key] = spec.name

    def __iter__(self) -> Iterator[GpuSpec]:
        return iter(self._specs.values())

    def __len__(self) -> int:
        return len(self._specs)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._specs

    @property
    def names(self) -> list[str]:
        return list(self._specs)

    def get(self, canonical: str) -> GpuSpec:
        """The spec for a canonical name (KeyError when absent)."""
        return self._specs[canonical]

    def lookup(self, name: str) -> GpuSpec | None:
        """The spec ``name`` resolves to, or None."""
        canonical = self._index.get(normalize_gpu_name(name))
        return None if canonical is None else self._specs[canonical]

    def resolve(self, name: str) -> GpuSpec:
        """The spec ``name`` resolves to; :class:`InputError` naming close matches otherwise."""
        spec = self.lookup(name)
        if spec is not None:
            return spec
        key = normalize_gpu_name(name)
        if key in AMBIGUOUS:
            options = " or ".join(AMBIGUOUS[key])
            raise InputError(f"GPU name {name!r} is ambiguous: say {options}")
        raise InputError(f"unknown GPU {name!r}; {self._suggest(key)}")

    def resolve_many(self, names: Iterable[str]) -> list[str]:
        """Canonical names for several inputs (comma-separated entries allowed), in order."""
        out: list[str] = []
        for raw in names:
            for part in raw.split(","):
                if part.strip():
                    canonical = self.resolve(part).name
                    if canonical not in out:
                        out.append(canonical)
        return out

    def _suggest(self, key: str) -> str:
        import difflib  # only for a name that matched nothing

        close = difflib.get_close_matches(key, list(self._index), n=8, cutoff=0.6)
        names: list[str] = []
        for alias in close:
            canonical = self._index[alias]
            if canonical not in names:
                names.append(canonical)
        if names:
            return "close matches: " + ", ".join(names[:4])
        return "known GPUs: " + ", ".join(self._specs)
