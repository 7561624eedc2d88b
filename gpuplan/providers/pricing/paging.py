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
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Read:
    """One kind of paginated read, named as the report names it (``price list``); each
    cloud's package declares its own with :func:`read`."""

    value: str


@dataclass(frozen=True)
class Cap:
    pages: int
    seconds: float


CAPS: dict[Read, Cap] = {}
"""Each declared read's cap (a test may lower one)."""


def read(name: str, cap: Cap) -> Read:
    """Declare a paginated read and its cap (a cloud package, at import)."""
    found = Read(name)
    CAPS[found] = cap
    return found


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
