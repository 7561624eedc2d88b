"""Sharding scopes over parallel runs: which run owns which account, project, region.

A scope (an adapter's ``scope`` name: ``aws us-east-1``, ``gcp my-project``, ``azure
<subscription>``) belongs to shard ``sha256(name) mod COUNT``. The hash, not a position
in a list, decides, so every shard agrees on the split whatever order discovery lists
the scopes in, and a scope keeps its shard when others are added (only the count moves
scopes). Pure: no environment, no clock; the caller reads flags and Kubernetes' index.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from gpuplan.core.errors import InputError

MAX_SHARDS = 10_000
"""More shards than any fleet has scopes is a typo (``--shard 3/30000``)."""


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (0-based, like Kubernetes' completion index)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.count <= MAX_SHARDS:
            raise InputError(f"shard count must be from 1 to {MAX_SHARDS}, got {self.count}")
        if not 0 <= self.index < self.count:
            raise InputError(
                f"shard index must be from 0 to {self.count - 1} for {self.count} shard(s), "
                f"got {self.index}"
            )

    @property
    def label(self) -> str:
        """``INDEX/COUNT``, as written on the command line and kept in the ledger."""
        return f"{self.index}/{self.count}"

    def owns(self, scope: str) -> bool:
        return shard_of(scope, self.count) == self.index


def shard_of(scope: str, count: int) -> int:
    """The shard (0 to ``count - 1``) that owns ``scope``: stable across processes,
    machines and Python versions (no ``hash()``, whose seed changes per process)."""
    if count < 1:
        raise ValueError("count must be at least 1")
    digest = hashlib.sha256(scope.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


def parse_shard(text: str) -> Shard:
    """``INDEX/COUNT`` (e.g. ``0/4``) as a :class:`Shard`; InputError when malformed."""
    index, sep, count = text.strip().partition("/")
    if not sep or not _whole(index) or not _whole(count):
        raise InputError(f"expected a shard as INDEX/COUNT (e.g. 0/4), got {text[:40]!r}")
    return Shard(int(index), int(count))


def parse_count(text: str, where: str) -> int:
    """A shard count from a flag or an environment variable (``where`` names it)."""
    if not _whole(text.strip()):
        raise InputError(f"{where}: expected a whole number of shards, got {text[:40]!r}")
    count = int(text)
    if not 1 <= count <= MAX_SHARDS:
        raise InputError(f"{where}: shard count must be from 1 to {MAX_SHARDS}, got {count}")
    return count


def _whole(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 6
