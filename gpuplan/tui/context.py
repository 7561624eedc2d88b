"""What the TUI's screens are given: where data lives, the clock, the provider factory.

Everything a screen could otherwise reach for globally (the clock, the environment, a
cloud SDK) comes in here, so tests build an app on a fixed catalog folder, a fixed
``now`` and the in-memory fake provider.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuplan.core.catalog.query import Catalog
    from gpuplan.core.policy import Policy
    from gpuplan.providers.base import CloudAdapter
    from gpuplan.usecases.lifecycle.concurrency import Concurrency

    AdaptersFor = Callable[[Policy, Catalog | None], tuple[list[CloudAdapter], list[str]]]


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class TuiContext:
    """The TUI's inputs; each screen reads what it needs."""

    catalog_dir: str | None = None
    """Catalog folder; None means ``GPUPLAN_CATALOG_DIR`` or the bundled catalog."""
    policies_dir: Path = Path("policies")
    """Where the Policies screen looks for ``*.yaml`` / ``*.yml`` policy files."""
    policy_file: Path | None = None
    """A policy file opened first (``--policy FILE``)."""
    clock: Callable[[], datetime] = utc_now
    """The only clock the TUI reads; tests pass a fixed one."""
    adapters_for: AdaptersFor | None = None
    """Builds the Fleet screen's adapters for a policy (and problem lines); None means
    :func:`gpuplan.usecases.clouds.adapters.build_adapters`, the real clouds, whose SDKs are
    imported only then. Tests pass the in-memory fake."""
    ledger_path: Path | None = None
    """The action ledger; None means the same default the CLI uses."""
    concurrency: Concurrency | None = None
    """How many scopes the Fleet screen surveys at once (``--concurrency``); None means
    the CLI's default."""
