"""Which pip extra brings a missing library: one line naming it, exit 2, never a traceback.

``pip install gpuplan`` brings what the catalog and the planner need; each cloud's SDKs
are an extra named in its registry entry (``gpuplan[<cloud>]``, all of them:
``gpuplan[all]``), as SkyPilot does (``skypilot[<cloud>,<cloud>]``), and so is the
terminal UI (``gpuplan[tui]``: Textual and Rich). The SDKs are imported where an adapter, a price
fetcher or a type listing is built; those places turn a missing one into
:class:`MissingExtra` through :func:`needs_extra`. A module that no extra provides is a
real bug and is raised as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from gpuplan.core.errors import InputError

EXTRA_OF_MODULE = {
    "textual": "tui",
    "rich": "tui",
}
"""Top-level module -> the extra that installs it: the terminal UI's here, each cloud's
SDK modules added by the cloud registry from its entry (``extra``, ``sdk_modules``)."""


def register_modules(modules: Iterable[str], extra: str) -> None:
    """``extra`` installs each top-level module of ``modules`` (a cloud's SDKs)."""
    EXTRA_OF_MODULE.update(dict.fromkeys(modules, extra))


class MissingExtra(InputError):
    """A command needs a library of an extra that is not installed (exit 2)."""


def extra_for(exc: ModuleNotFoundError) -> str | None:
    """The extra that provides the module ``exc`` could not import; None if no extra does."""
    return EXTRA_OF_MODULE.get((exc.name or "").split(".")[0])


def missing(exc: ModuleNotFoundError, what: str) -> MissingExtra:
    """The one-line error for ``exc``; re-raises ``exc`` when no extra provides the module."""
    extra = extra_for(exc)
    if extra is None:
        raise exc
    module = (exc.name or "").split(".")[0]
    return MissingExtra(
        f"{what}: needs {module}, which is not installed: pip install 'gpuplan[{extra}]'"
    )


@contextmanager
def needs_extra(what: str) -> Iterator[None]:
    """Run the block; a missing module of an extra becomes :class:`MissingExtra`."""
    try:
        yield
    except ModuleNotFoundError as exc:
        raise missing(exc, what) from None
