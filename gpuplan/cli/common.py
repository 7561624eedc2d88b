"""Shared CLI plumbing: the handler type, common options, notices on stderr."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from gpuplan.cli.output import say
from gpuplan.core.errors import InputError

if TYPE_CHECKING:
    from gpuplan.core.catalog.query import Catalog
    from gpuplan.providers.base import CloudAdapter
    from gpuplan.providers.cloud_entry import CloudEntry
    from gpuplan.usecases.lifecycle.concurrency import Concurrency
    from gpuplan.usecases.lifecycle.survey import Survey

Handler = Callable[[argparse.Namespace], int]


class Worded(str):
    """Help text that names the registered clouds: the string itself is the cloud-neutral
    wording (what argparse holds while the parser is built, which loads no registry),
    and :func:`exact_help` puts in ``wording()``, built from the registry's entries, when
    the help is printed (``--help`` alone pays for loading the registry)."""

    wording: Callable[[], str]

    def __new__(cls, neutral: str, wording: Callable[[], str]) -> Worded:
        text = super().__new__(cls, neutral)
        text.wording = wording
        return text


def exact_help(parser: argparse.ArgumentParser) -> None:
    """Put each :class:`Worded` description and flag help of ``parser`` in its exact
    wording (the parser's ``format_help`` calls this)."""
    if isinstance(parser.description, Worded):
        parser.description = parser.description.wording()
    for action in parser._actions:
        if isinstance(action.help, Worded):
            action.help = action.help.wording()


def cloud_words(word: Callable[[CloudEntry], str], conjunction: str = "and") -> str:
    """``word(entry)`` of each registered cloud that has one, as a list in a sentence
    (``A, B and C``), in registry order."""
    from gpuplan.usecases.clouds.registry import entries

    words = [w for e in entries() if (w := word(e))]
    return f" {conjunction} ".join(filter(None, [", ".join(words[:-1]), *words[-1:]]))


def cloud_named(entry: CloudEntry, word: str) -> str:
    """``AWS account``: the cloud's name before ``word``; empty when ``word`` is."""
    return f"{entry.title or entry.provider.value} {word}" if word else ""


MAX_WAIT_S = 24 * 3600.0


def existing_dir(text: str) -> str:
    """An argparse type: a folder that exists (a missing one is bad input, not a fallback)."""
    import os

    if not text or not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not an existing folder")
    return text


def target_dir(text: str) -> str:
    """An argparse type: a folder to write into; it may be missing (it is created), but
    an empty name, a file, or a path that cannot be resolved (a symlink loop) is refused."""
    import os

    if not text.strip():
        raise argparse.ArgumentTypeError("expected a folder, got an empty name")
    try:
        os.stat(text)
    except FileNotFoundError:
        return text
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or "not a usable path"
        raise argparse.ArgumentTypeError(f"{text!r}: {reason}") from None
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} exists and is not a folder")
    return text


def wait_seconds(text: str) -> float:
    """An argparse type: seconds to wait, finite, from 0 to a day (nan, inf, -1 refused)."""
    try:
        value = float(text) if text.isascii() else math.nan
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 <= value <= MAX_WAIT_S:  # also false for nan
        raise argparse.ArgumentTypeError(f"expected seconds from 0 to {MAX_WAIT_S:g}, got {text!r}")
    return value


def add_catalog_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--catalog-dir",
        metavar="DIR",
        type=existing_dir,
        help="catalog folder whose files override the bundled ones, file by file; it must "
        "exist (env: GPUPLAN_CATALOG_DIR; default: the user catalog folder that refresh writes)",
    )


def check_catalog_env() -> None:
    """``GPUPLAN_CATALOG_DIR`` names a folder that exists, when it is set."""
    import os

    env = os.environ.get("GPUPLAN_CATALOG_DIR")
    if env and not os.path.isdir(env):
        raise InputError(f"GPUPLAN_CATALOG_DIR={env!r} is not an existing folder")


def add_db(parser: argparse._ActionsContainer) -> None:
    """``--db``: the ledger (runs, decisions, actions, spend) every lifecycle command shares."""
    parser.add_argument(
        "--db",
        metavar="PATH|URL",
        help="ledger file, or a PostgreSQL ledger as postgresql://USER@HOST/DB (password "
        "from PGPASSFILE or PGPASSWORD, never the URL) (env: GPUPLAN_DB; default: "
        "ledger.sqlite3 in the user data dir)",
    )


def _shard_text(text: str) -> str:
    """An argparse type: ``INDEX/COUNT`` checked here (bad: exit 2), kept as text."""
    from gpuplan.core.lifecycle.shard import parse_shard

    try:
        parse_shard(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None
    return text


def _shard_count(text: str) -> int:
    from gpuplan.core.lifecycle.shard import parse_count

    try:
        return parse_count(text, "--shards")
    except InputError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def add_shard(parser: argparse._ActionsContainer) -> None:
    """``--shard INDEX/COUNT`` and ``--shards COUNT``: this run's part of the scopes."""
    parser.add_argument(
        "--shard",
        metavar="INDEX/COUNT",
        type=_shard_text,
        help="survey only the scopes of shard INDEX of COUNT (a scope's shard: a hash of "
        "its name); default: from a Kubernetes Indexed Job (JOB_COMPLETION_INDEX)",
    )
    parser.add_argument(
        "--shards",
        metavar="COUNT",
        type=_shard_count,
        help="the shard count when the index comes from JOB_COMPLETION_INDEX "
        "(env: GPUPLAN_SHARDS; set it to the Job's completions)",
    )


_GROUP_BY = (
    "group by account ({}), by a label's value, or a Kubernetes workload's namespace or owner ({})"
)


def add_group_by(parser: argparse.ArgumentParser, default: str = "label:team") -> None:
    """``--by``: a label's value or the account; parsed by the core's one parser."""
    parser.add_argument(
        "--by",
        default=default,
        metavar="account|label:KEY|namespace|owner",
        help=Worded(
            _GROUP_BY.format("each cloud's account, project or subscription", default),
            lambda: _GROUP_BY.format(
                cloud_words(lambda e: cloud_named(e, e.account_kind), "or"), default
            ),
        ),
    )


def concurrency_count(text: str) -> int:
    """An argparse type: scopes surveyed at once, a whole number from 1 to 256."""
    from gpuplan.usecases.lifecycle.concurrency import parse_workers

    try:
        return parse_workers(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(exc.message.removeprefix("--concurrency: ")) from None


def add_concurrency(parser: argparse._ActionsContainer) -> None:
    """``--concurrency N``: how many scopes (regions, projects, subscriptions) at once."""
    parser.add_argument(
        "--concurrency",
        metavar="N",
        type=concurrency_count,
        default=None,
        help="scopes (regions, projects, subscriptions) surveyed at once, 1 to 256; 1 is "
        "one after the other (env: GPUPLAN_CONCURRENCY; default 16). Output order does "
        "not depend on it",
    )


def concurrency_for(args: argparse.Namespace) -> Concurrency:
    """The pool for ``--concurrency`` (or ``GPUPLAN_CONCURRENCY``), with the per-service
    caps of ``GPUPLAN_SERVICE_LIMITS``; a bad value is InputError (exit 2)."""
    from gpuplan.usecases.lifecycle.concurrency import from_settings

    return from_settings(getattr(args, "concurrency", None))


def add_output_format(parser: argparse.ArgumentParser, *, csv: bool = True) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--json", action="store_true", help="print JSON")
    if csv:
        group.add_argument("--csv", action="store_true", help="print CSV")
    add_wide(parser)


def add_wide(parser: argparse.ArgumentParser) -> None:
    """``--wide``: tables keep every column instead of fitting the terminal."""
    parser.add_argument(
        "--wide",
        action="store_true",
        help="tables show every column; by default a table fits the terminal (COLUMNS, else "
        "the terminal's width; a pipe or file gets every column), leaving out the least "
        "important columns first",
    )


def load_catalog_for(args: argparse.Namespace, *, fast: bool = False) -> Catalog:
    """The catalog named by ``--catalog-dir`` (or the bundle), notices printed to stderr.

    ``fast``: the same rows read without pydantic, for read-only commands (``estimate``,
    ``catalog``); an unusual or bad file still goes through the validated reader."""
    from gpuplan.loaders.catalog import load_catalog

    check_catalog_env()
    catalog = load_catalog(getattr(args, "catalog_dir", None), now=datetime.now(UTC), fast=fast)
    print_notices(catalog.notices)
    return catalog


def scope_progress(
    total: int, verb: str = "surveyed"
) -> Callable[[CloudAdapter, Survey], None] | None:
    """``surveyed 3/200 scopes (gcp my-project)`` on stderr as each scope is read; only when
    stderr is a terminal and there is more than one scope (logs and pipes stay clean)."""
    if total < 2 or not sys.stderr.isatty():
        return None
    done = 0

    def report(adapter: CloudAdapter, _part: Survey) -> None:
        nonlocal done
        done += 1
        line = f"\r{verb} {done}/{total} scopes ({adapter.scope})"[:100]
        end = "\n" if done == total else ""
        print(f"{line:<100}", end=end, file=sys.stderr, flush=True)

    return report


def check_provider_regions(
    providers: Iterable[str], regions: Iterable[str], catalog: Catalog
) -> None:
    """InputError (exit 2) for a region that only another cloud has: ``--provider aws
    --region eastus`` names a mismatch instead of listing 0 offers."""
    wanted = {p.strip().lower() for p in providers}
    if not wanted:
        return
    owners: dict[str, set[str]] = {}
    for offer in catalog.offers:
        owners.setdefault(offer.region.lower(), set()).add(offer.provider.value)
    for region in regions:
        found = owners.get(region.strip().lower())
        if found and not found & wanted:
            raise InputError(
                f"--region {region} belongs to {', '.join(sorted(found))}, not to "
                f"--provider {', '.join(sorted(wanted))}; drop one or match them"
            )


def print_notices(notices: Iterable[str]) -> None:
    for notice in notices:
        say("notice", notice)


def split_list(values: Iterable[str] | None) -> list[str]:
    """Repeatable and comma-separated option values, flattened, blanks dropped."""
    out: list[str] = []
    for value in values or ():
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return out


def parse_money(text: str, flag: str) -> Decimal:
    """An amount in USD: the grammar of every amount (``50K``, ``5M``, ``$5,000``)."""
    from gpuplan.core.planner.quantities import parse_usd

    return parse_usd(text, flag)


def row_limit(text: str) -> int:
    """An argparse type: how many rows to show, a whole number from 1 to 1,000,000."""
    if not text.strip().isascii() or not text.strip().isdigit() or len(text.strip()) > 7:
        raise argparse.ArgumentTypeError(f"expected a whole number from 1, got {text[:40]!r}")
    value = int(text)
    if not 1 <= value <= 1_000_000:
        raise argparse.ArgumentTypeError(f"expected a number from 1 to 1000000, got {text!r}")
    return value
