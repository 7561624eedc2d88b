"""What the clouds' live price sources share: progress, paging and discovery settings.

Each cloud's own price API lives in its package, returning core quotes:
:mod:`gpuplan.providers.aws.price_list` (the Price List Query API and EC2 spot price
history), :mod:`gpuplan.providers.azure.retail_prices` (the public Retail Prices REST API,
stdlib ``urllib``, no SDK, no auth) and :mod:`gpuplan.providers.gcp.billing_catalog` (the
Cloud Billing Catalog API). Every fetcher takes its client or endpoint as an argument (tests
point them at wire fakes), reads region by region where the API allows, and reports a region
that failed in :class:`gpuplan.core.catalog.refresh.FetchResult` instead of raising, so the
other regions still update. SDKs are imported inside the functions that use them.
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str], None]


def no_progress(_: str) -> None:
    """A progress sink that says nothing."""
