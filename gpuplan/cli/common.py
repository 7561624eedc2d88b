"""Shared CLI plumbing: the handler type, common options, notices on stderr."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING

from gpuplan.core.errors import InputError

if TYPE_CHECKING:
    from gpuplan.core.catalog import Catalog

Handler = Callable[[argparse.Namespace], int]
SubParsers = "argparse._SubParsersAction[argparse.ArgumentParser]"


def add_catalog_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--catalog-dir",
        metavar="DIR",
        help="catalog folder whose files override the bundled ones, file by file "
        "(env: GPUPLAN_CATALOG_DIR; default: the user catalog folder that refresh writes)",
    )


def add_db(parser: argparse._ActionsContainer) -> None:
    """``--db``: the ledger (runs, decisions, actions, spend) every lifecycle command shares."""
    parser.add_argument(
        "--db",
        metavar="PATH",
        help="ledger file (env: GPUPLAN_DB; default: ledger.sqlite3 in the user data dir)",
    )


def add_output_format(parser: argparse.ArgumentParser, *, csv: bool = True) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--json", action="store_true", help="print JSON")
    if csv:
        group.add_argument("--csv", action="store_true", help="print CSV")


def load_catalog_for(args: argparse.Namespace, *, fast: bool = False) -> Catalog:
    """The catalog named by ``--catalog-dir`` (or the bundle), notices printed to stderr.

    ``fast``: plain rows without pydantic, for read-only planning (``estimate``)."""
    from gpuplan.loaders.catalog import load_catalog

    catalog = load_catalog(getattr(args, "catalog_dir", None), now=datetime.now(UTC), fast=fast)
    print_notices(catalog.notices)
    return catalog


def print_notices(notices: Iterable[str]) -> None:
    for notice in notices:
        print(f"gpuplan: notice: {notice}", file=sys.stderr)


def split_list(values: Iterable[str] | None) -> list[str]:
    """Repeatable and comma-separated option values, flattened, blanks dropped."""
    out: list[str] = []
    for value in values or ():
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return out


def parse_money(text: str, flag: str) -> Decimal:
    try:
        value = Decimal(text.strip().lstrip("$"))
    except InvalidOperation:
        raise InputError(f"{flag}: expected an amount in USD, got {text!r}") from None
    if not value.is_finite() or value < 0:
        raise InputError(f"{flag}: expected a non-negative amount in USD, got {text!r}")
    return value
