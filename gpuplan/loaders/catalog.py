"""Loads the whole catalog: the GPU table plus every provider file, validated.

Where the files come from (one rule, for reading and for ``catalog refresh``/``import``):

- The *catalog directory* is ``--catalog-dir`` (the ``directory`` argument), else
  ``$GPUPLAN_CATALOG_DIR``, else the user catalog in the XDG data dir
  (``~/.local/share/gpuplan/catalog`` on Linux, via platformdirs).
- Each file (``gpus.toml``, and each cloud's catalog file as its registry entry names it:
  ``aws.csv``, ``gcp.csv``, ``azure.csv``) is read from the
  catalog directory when it is there, else from the bundled data. The overlay is per
  whole file: a refreshed ``aws.csv`` replaces the bundled AWS offers entirely (it
  already carries forward what was not refreshed), so offers removed upstream do not
  come back. A complete copy of the catalog in the directory therefore replaces the
  bundle, as before.
- ``refresh`` and ``import`` write into that same catalog directory, so what is written
  is what is read, with the same flag.
- A file in the default user folder whose prices are older than the bundled file it
  hides (a newer release was installed after a refresh) still wins, with a notice.

Each offer says where it was read from in ``Offer.origin`` ("bundled", or the path of
the user file). The clock is an argument (``now``) so the staleness notice is testable.
"""

from __future__ import annotations

import csv
import os
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gpuplan.core.catalog.gpu_names import GpuTable
from gpuplan.core.catalog.kinds import Provider
from gpuplan.core.catalog.query import Catalog, stale_notice
from gpuplan.core.clouds import facts_of, registered
from gpuplan.core.errors import DataError
from gpuplan.loaders.paths import CATALOG_DIR_ENV, bundled_pricing_dir

if TYPE_CHECKING:
    from gpuplan.core.catalog.offers import Offer

BUNDLED = "bundled"
GPU_FILE = "gpus.toml"


def user_catalog_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The catalog directory: the override, ``$GPUPLAN_CATALOG_DIR``, or the XDG data dir."""
    if override:
        return Path(override)
    env = os.environ.get(CATALOG_DIR_ENV)
    if env:
        return Path(env)
    from platformdirs import user_data_dir

    return Path(user_data_dir("gpuplan", appauthor=False)) / "catalog"


def catalog_file(name: str, directory: Path, bundled: Path) -> tuple[Path, str]:
    """The file to read for ``name`` and its origin label ("bundled" or the user path)."""
    user = directory / name
    # Anything by that name counts (a FIFO or a device too), so the bounded reader refuses
    # it with one line instead of a silent fall-back to the bundled file.
    try:
        elsewhere = directory.resolve() != bundled.resolve()
    except (OSError, RuntimeError):  # a symlink loop: RuntimeError before Python 3.13
        raise DataError(str(directory), "cannot be resolved (a symlink loop?)") from None
    if elsewhere and (user.exists() or user.is_symlink()):
        return user, str(user)
    return bundled / name, BUNDLED


def load_gpus(directory: str | os.PathLike[str] | None = None, *, fast: bool = False) -> GpuTable:
    """The GPU table under the same overlay rule (``gpus.toml`` from the catalog dir or the
    bundle): what ``gpuplan gpus`` and policy checks should read.

    ``fast`` reads it without pydantic (see :mod:`gpuplan.loaders.fast_catalog`),
    falling back to the validated reader for anything unusual.
    """
    root = user_catalog_dir(directory)
    path, _ = catalog_file(GPU_FILE, root, bundled_pricing_dir())
    if fast:
        from gpuplan.loaders.fast_catalog import NotFast, read_gpus

        try:
            return read_gpus(path)
        except NotFast:
            pass
    from gpuplan.loaders.gpu_specs import load_gpu_table

    return load_gpu_table(path.parent)


def load_catalog(
    directory: str | os.PathLike[str] | None = None,
    *,
    now: datetime | None = None,
    providers: tuple[Provider, ...] | None = None,
    fast: bool = False,
) -> Catalog:
    """Read and validate the catalog: files in the catalog directory over the bundled ones.

    ``providers``: the clouds to read (default: every registered one, each from the
    catalog file its entry names, :mod:`gpuplan.core.clouds`). ``now`` enables the
    staleness notice; without it no age check is made. ``fast`` (the estimate path) reads
    well-formed files into plain rows without pydantic and leaves anything unusual to the
    validated reader: same offers, same errors.
    """
    root = user_catalog_dir(directory)
    # A folder named on purpose (flag, environment) is the catalog the user wants; only the
    # default user folder, filled by an earlier refresh, can silently go stale.
    default_dir = not directory and not os.environ.get(CATALOG_DIR_ENV)
    bundled = bundled_pricing_dir()
    gpus = load_gpus(directory, fast=fast)
    offers: list[Offer] = []
    notices: list[str] = []
    for provider in registered() if providers is None else providers:
        if not facts_of(provider).catalog_file:
            continue  # a platform priced from the clouds' catalogs (Kubernetes nodes)
        path, origin = catalog_file(facts_of(provider).catalog_file, root, bundled)
        if not path.exists():
            notices.append(f"{path}: missing; no {provider.value} offers")
            continue
        loaded, found = _read_offers(path, provider, gpus, origin, fast)
        offers.extend(loaded)
        notices.extend(found)
        if origin != BUNDLED and default_dir:
            newest = max((o.as_of for o in loaded), default=None)
            notices.extend(_older_than_bundle(path, newest, bundled / path.name))
        if now is not None:
            stale = stale_notice(loaded, now, str(path))
            if stale:
                notices.append(stale)
    return Catalog(offers=tuple(offers), gpus=gpus, notices=tuple(notices))


def _read_offers(
    path: Path, provider: Provider, gpus: GpuTable, origin: str, fast: bool
) -> tuple[list[Offer], list[str]]:
    """Offers (their origin set) and notices of one file, fast where the file allows."""
    if fast:
        from gpuplan.loaders.fast_catalog import NotFast, read_offers

        try:
            return read_offers(path, provider, gpus, origin)
        except NotFast:
            pass
    from gpuplan.loaders.catalog_files import load_provider_file

    loaded = load_provider_file(path, provider, gpus)
    return [replace(o, origin=origin) for o in loaded.offers], loaded.notices


def _older_than_bundle(path: Path, as_of: date | None, bundled: Path) -> list[str]:
    """A notice when the bundled file is newer than the user file that hides it (their
    newest prices compared: rows of a file carry their own dates)."""
    newest = _newest_as_of(bundled)
    if as_of is None or newest is None or newest <= as_of:
        return []
    return [
        f"{path}: prices as_of {as_of.isoformat()} hide newer bundled ones (as_of "
        f"{newest.isoformat()}); run 'gpuplan catalog refresh' or remove the file"
    ]


def _newest_as_of(path: Path) -> date | None:
    """The newest ``as_of`` in a catalog file, read without validating the rows."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            cells = [row.get("as_of", "") for row in csv.DictReader(handle)]
        return max((date.fromisoformat(c) for c in cells if c), default=None)
    except (OSError, ValueError, csv.Error):
        return None


def bundled_catalog_path() -> Path:
    return bundled_pricing_dir()
