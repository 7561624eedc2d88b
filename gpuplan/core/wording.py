"""Counts in words: ``1 GPU``, ``2 GPUs``, never ``GPU(s)``."""

from __future__ import annotations


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``1 GPU``, ``2 GPUs``, ``1,234 offers``; ``many`` for irregular plurals."""
    return f"{n:,} {noun if n == 1 else (many or noun + 's')}"
