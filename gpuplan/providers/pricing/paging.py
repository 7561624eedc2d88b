"""Every paginated read of a provider has a page cap and a time cap.

A price or listing API that keeps answering with a next token (a bug, a proxy that
loops, a hostile mirror) would otherwise be followed for as long as it answers: 3,080
Price List requests in one attack run. :func:`capped` wraps the pages of one read and
stops it with :class:`PageCapError` past :data:`CAPS` (pages, seconds since its first
page was asked for); the fetcher reports that region (or provider) as failed and keeps
its previous data, like any other failed read. One call's own timeout is the HTTP
client's or the SDK's business; the time cap bounds the whole read.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

T = TypeVar("T")


class Read(StrEnum):
    """One kind of paginated read, named as the report names it."""

    AWS_PRICE_LIST = "price list"
    AWS_SPOT_HISTORY = "spot price history"
    AWS_OFFERINGS = "instance type offerings"
    AWS_TYPES = "instance types"
    AZURE_RETAIL = "retail prices"
    AZURE_SKUS = "resource SKUs"
    GCP_SKUS = "billing SKUs"
    GCP_MACHINE_TYPES = "machine types"
    GCP_ACCELERATORS = "accelerator types"


@dataclass(frozen=True)
class Cap:
    pages: int
    seconds: float


CAPS: dict[Read, Cap] = {
    # Real sizes, for scale: a region's price list query is 1-3 pages of 100; spot
    # history a few pages; instance types ~10 pages of 100; Azure 1-20 pages of 100;
    # the Compute Engine SKU list ~10 pages of 5,000.
    Read.AWS_PRICE_LIST: Cap(200, 300.0),
    Read.AWS_SPOT_HISTORY: Cap(200, 300.0),
    Read.AWS_OFFERINGS: Cap(100, 120.0),
    Read.AWS_TYPES: Cap(100, 120.0),
    Read.AZURE_RETAIL: Cap(500, 600.0),
    Read.AZURE_SKUS: Cap(200, 300.0),
    Read.GCP_SKUS: Cap(200, 600.0),
    Read.GCP_MACHINE_TYPES: Cap(200, 300.0),
    Read.GCP_ACCELERATORS: Cap(200, 300.0),
}


class PageCapError(Exception):
    """A paginated read went past its page or time cap."""


def capped(
    pages: Iterable[T], read: Read, where: str, clock: Callable[[], float] = time.monotonic
) -> Iterator[T]:
    """The pages of ``read`` in ``where`` (``aws us-east-1``), stopped past its cap."""
    cap = CAPS[read]
    start = clock()
    for number, page in enumerate(pages, start=1):
        if number > cap.pages:
            raise PageCapError(f"{where}: {read.value}: more than {cap.pages} pages; giving up")
        if clock() - start > cap.seconds:
            raise PageCapError(
                f"{where}: {read.value}: still paging after {cap.seconds:g}s "
                f"({number - 1} pages); giving up"
            )
        yield page
