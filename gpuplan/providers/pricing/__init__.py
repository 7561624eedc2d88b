"""Live price sources: one module per cloud's own price API, each returning core quotes.

- :mod:`.aws`: the Price List Query API (boto3 ``pricing``) and EC2 spot price history.
- :mod:`.azure`: the public Retail Prices REST API (stdlib ``urllib``, no SDK, no auth).
- :mod:`.gcp`: the Cloud Billing Catalog API (google-cloud-billing).

Every fetcher takes its client or endpoint as an argument (tests point them at wire
fakes), reads region by region where the API allows, and reports a region that failed in
:class:`gpuplan.core.refresh.FetchResult` instead of raising, so the other regions still
update. SDKs are imported inside the functions that use them.
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str], None]


def no_progress(_: str) -> None:
    """A progress sink that says nothing."""
