"""Cell formatting for the TUI's tables: money, counts and missing values.

Presentation only; the numbers come from the use cases unchanged.
"""

from __future__ import annotations

from decimal import Decimal

from gpuplan.core.wording import plural as plural

MISSING = "-"


def money(value: Decimal | float | None, digits: int = 2) -> str:
    """USD with thousands separators; ``-`` where not sold / unknown."""
    if value is None:
        return MISSING
    return f"{float(value):,.{digits}f}"


def number(value: float | Decimal | None, digits: int = 0) -> str:
    if value is None:
        return MISSING
    return f"{float(value):,.{digits}f}"


def count(value: float) -> str:
    """GPU counts: whole numbers plain, fractions to two places (1/6 -> 0.17)."""
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:.2f}".rstrip("0").rstrip(".")


def hours(value: float | None) -> str:
    """A duration: hours below two days, then days, then years (365 d) past two years."""
    if value is None:
        return MISSING
    if value >= 2 * 365 * 24:
        return f"{value / (365 * 24):,.1f} y"
    if value >= 10 * 24:
        return f"{value / 24:,.0f} d"
    if value >= 48:
        return f"{value / 24:,.1f} d"
    return f"{value:,.1f} h"


def minutes(value: int | None) -> str:
    """Idle time: minutes, or hours and minutes past the hour."""
    if value is None:
        return MISSING
    if value >= 60:
        return f"{value // 60}h{value % 60:02d}m"
    return f"{value}m"


def compact_money(value: Decimal | float | None) -> str:
    """Whole dollars with separators; millions as ``12.3M`` so a column stays narrow."""
    if value is None:
        return MISSING
    amount = float(value)
    if amount >= 1e6:
        return f"{amount / 1e6:,.1f}M"
    return f"{amount:,.0f}"
