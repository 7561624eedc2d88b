"""What stands in for a cloud or a reader's files when a documented command needs one.

Each stand-in is a context manager that gets the session's scratch folder (HOME is
``scratch / "home"``) and yields the environment the commands run with; it is keyed in
``claims.STAND_INS`` by the command that needs it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

from gpuplan.core.catalog.offers import Provider
from gpuplan.loaders.catalog import load_catalog
from gpuplan.loaders.paths import bundled_pricing_dir
from gpuplan.providers.azure.retail_prices import ENDPOINT_ENV
from tests.providers.pricing.azure_fake import (
    PROXY_VARIABLES,
    AzureRetailFake,
    azure_items,
    serve,
)

MOVED = "Standard_ND96isr_H100_v5"
"""The Azure type whose on-demand price the fake Retail Prices API raises by 10%."""


@contextmanager
def azure_retail_prices(scratch: Path) -> Iterator[dict[str, str]]:
    """The Azure Retail Prices API on loopback (tests/providers/pricing/azure_fake.py),
    answering the bundled Azure offers with one price moved."""
    offers = [o for o in load_catalog(bundled_pricing_dir()).offers if o.provider is Provider.AZURE]
    upstream = [
        replace(o, **{"on_demand_hourly": o.on_demand_hourly * Decimal("1.1")})
        if o.instance_type == MOVED and o.on_demand_hourly is not None
        else o
        for o in offers
    ]
    with serve(AzureRetailFake(azure_items(upstream), page_size=1000)) as fake:
        # The fake answers at the API's own host through an HTTP proxy on loopback
        # (serve sets HTTP_PROXY here); the example's process needs the same variables.
        proxy = {name: os.environ[name] for name in PROXY_VARIABLES if name in os.environ}
        yield {ENDPOINT_ENV: fake.endpoint, **proxy}


@contextmanager
def skypilot_catalogs(scratch: Path) -> Iterator[dict[str, str]]:
    """``~/.sky/catalogs/v8`` holding the SkyPilot files of tests/loaders/data/skypilot."""
    data = Path(__file__).resolve().parents[1] / "loaders" / "data" / "skypilot"
    shutil.copytree(data, scratch / "home" / ".sky" / "catalogs" / "v8")
    yield {}
