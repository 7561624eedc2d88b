"""Loads the whole catalog: the GPU table plus every provider file, validated.

The clock is an argument (``now``) so the staleness notice is testable and never turns
CI red as the calendar moves.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from gpuplan.core.catalog import Catalog, stale_notice
from gpuplan.core.offers import Offer, Provider
from gpuplan.loaders.catalog_files import load_provider_file
from gpuplan.loaders.gpu_specs import load_gpu_table
from gpuplan.loaders.paths import pricing_dir

PROVIDER_FILES = {Provider.AWS: "aws.csv", Provider.GCP: "gcp.csv", Provider.AZURE: "azure.csv"}


def load_catalog(
    directory: str | os.PathLike[str] | None = None, *, now: datetime | None = None
) -> Catalog:
    """Read and validate the catalog in ``directory`` (default: the bundled one).

    ``now`` enables the staleness notice; without it no age check is made.
    """
    root = pricing_dir(directory)
    gpus = load_gpu_table(root)
    offers: list[Offer] = []
    notices: list[str] = []
    for provider, filename in PROVIDER_FILES.items():
        path = root / filename
        if not path.exists():
            notices.append(f"{path}: missing; no {provider.value} offers")
            continue
        loaded = load_provider_file(path, provider, gpus)
        offers.extend(loaded.offers)
        notices.extend(loaded.notices)
        if now is not None:
            stale = stale_notice(loaded.as_of, now, str(path))
            if stale:
                notices.append(stale)
    return Catalog(offers=tuple(offers), gpus=gpus, notices=tuple(notices))


def bundled_catalog_path() -> Path:
    return pricing_dir()
