"""How old the catalog's prices are, as the listing commands show it: the per-row mark
(``*`` past 30 days, ``stale`` past 90), the footer that explains only the marks the table
shows, and ``--include-stale``. A stale row is marked whatever the terminal's width: in
the ``as of`` column, or on its ``$/GPU-h`` (:data:`STALE_MARK`) when that column is left
out to fit."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING

from gpuplan.core.wording import plural

if TYPE_CHECKING:  # the models (and pydantic) load in the handler, not at start-up
    from gpuplan.core.catalog.offers import Offer

STALE_MARK = " ~"
"""Beside the per-GPU price of a stale row when the ``as of`` column is not shown."""


def add_include_stale(parser: argparse.ArgumentParser) -> None:
    """``--include-stale``: rank prices over 90 days old by price alone."""
    parser.add_argument(
        "--include-stale",
        action="store_true",
        help="rank prices read over 90 days ago by price alone (they still lose a tie); "
        "by default they rank after every fresh price",
    )


def age_mark(offer: Offer, today: date) -> str:
    """`` stale`` past 90 days, `` *`` past 30, nothing for a fresh price."""
    from gpuplan.core.catalog.query import is_old, is_stale

    if is_stale(offer, today):
        return " stale"
    return " *" if is_old(offer, today) else ""


def freshness_footer(
    offers: Sequence[Offer], today: date, matched: int | None = None, *, marked: bool = True
) -> str:
    """The table's closing line: count, the range of price dates, and the old-row markers
    (``marked``: the ``as of`` column with its marks is shown; else a count and how to see
    them)."""
    from gpuplan.core.catalog.query import OLD_ROW_AFTER, STALE_AFTER, as_of_range, is_old, is_stale

    span = as_of_range(offers)
    if span is None:
        return "0 offers"
    dates = span[0].isoformat() + ("" if span[0] == span[1] else f" to {span[1].isoformat()}")
    top = f" (top {len(offers)} of {matched:,})" if matched and len(offers) < matched else ""
    text = f"{plural(len(offers), 'offer')}{top}; prices in USD per hour, as of {dates}"
    stale = sum(is_stale(o, today) for o in offers)
    old = sum(is_old(o, today) for o in offers) - stale
    if old and marked:
        text += f"; * = price older than {OLD_ROW_AFTER.days} days ({plural(old, 'row')})"
    elif old:
        days = OLD_ROW_AFTER.days
        text += f"; {plural(old, 'row')} priced over {days} days ago (--wide shows which)"
    if stale:
        mark = "stale" if marked else STALE_MARK.strip()
        text += (
            f"; {mark} = older than {STALE_AFTER.days} days ({plural(stale, 'row')}), "
            "ranked after fresh prices unless --include-stale"
        )
    return text


def as_of_text(offers: Sequence[Offer]) -> str:
    """The oldest row's date, and the newest when rows differ (a mixed catalog says so)."""
    from gpuplan.core.catalog.query import as_of_range

    span = as_of_range(offers)
    if span is None:
        return "unknown"
    if span[0] == span[1]:
        return span[0].isoformat()
    return f"{span[0].isoformat()} (oldest row; newest {span[1].isoformat()})"
