"""The registry entry type, by its former path: :mod:`gpuplan.providers.cloud_entry`.

The entry type lives below the providers so that a cloud's package in
``gpuplan/providers/<name>/`` can build its own entry (the layers contract forbids a
provider importing a use case); this module keeps the old import path working.
"""

from __future__ import annotations

from gpuplan.providers.cloud_entry import (
    FAKE_FLEET_ENV,
    NOTHING_SURVEYED,
    BuildContext,
    CloudEntry,
    Discoverer,
    DiscovererSetup,
    Fetcher,
    FetchRequest,
    ScopeAdapters,
    ScopeBuilder,
    Service,
    catalog_entry,
)

__all__ = [
    "FAKE_FLEET_ENV",
    "NOTHING_SURVEYED",
    "BuildContext",
    "CloudEntry",
    "Discoverer",
    "DiscovererSetup",
    "FetchRequest",
    "Fetcher",
    "ScopeAdapters",
    "ScopeBuilder",
    "Service",
    "catalog_entry",
]
