"""``gpuplan catalog refresh`` and ``gpuplan catalog import``: keep the catalog current.

Both write into the user catalog directory (``--catalog-dir``, ``$GPUPLAN_CATALOG_DIR``
or the XDG data dir) that overlays the bundled catalog. Progress goes to stderr, the
report to stdout (``--json`` for a machine). Exit 0 when everything asked for was
updated, 1 when a provider or region failed or was refused (the rest is still written),
2 for bad input. Cloud SDKs load inside the handlers only.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from gpuplan.cli.common import print_notices, split_list, target_dir
from gpuplan.cli.flag_rules import check_flags
from gpuplan.cli.render import print_json, wrap
from gpuplan.core.clouds import facts_of, registered
from gpuplan.core.errors import InputError
from gpuplan.core.wording import plural, shown_line

if TYPE_CHECKING:
    from collections.abc import Sequence

    from gpuplan.core.catalog.offers import Offer
    from gpuplan.usecases.catalog.refresh import ProviderOutcome, RefreshReport


ACTIONS = ("refresh", "import")


def register(catalog: argparse.ArgumentParser) -> None:
    """Add the optional ACTION; plain ``gpuplan catalog ...`` keeps listing offers.

    The action and its own options are taken as a remainder and parsed by the action's
    parser in :func:`dispatch`: argparse's optional subparsers would otherwise read a stray
    word after an unknown flag (``--colour blue``) as an action name.
    """
    catalog.add_argument(
        "action",
        nargs=argparse.REMAINDER,
        metavar="ACTION ...",
        help="optional: 'refresh' (prices from the providers' APIs) or 'import' (a SkyPilot "
        "catalog); see 'gpuplan catalog refresh --help'",
    )
    catalog.set_defaults(action_parser_class=type(catalog))


def dispatch(args: argparse.Namespace) -> int | None:
    """Run the ACTION given after ``gpuplan catalog``, or None when there is none."""
    words: list[str] = getattr(args, "action", None) or []
    if not words:
        return None
    name, rest = words[0], words[1:]
    if name not in ACTIONS:
        raise InputError(f"unknown catalog action {name!r}; expected refresh or import")
    parser_class: type[argparse.ArgumentParser] = args.action_parser_class
    parser = parser_class(prog=f"gpuplan catalog {name}")
    (_refresh_parser if name == "refresh" else _import_parser)(parser)
    sub_args = parser.parse_args(rest)
    check_flags(f"catalog {name}", parser, sub_args, rest)
    result: int = sub_args.handler(sub_args)
    return result


def _refresh_parser(r: argparse.ArgumentParser) -> None:
    r.description = (
        "Fetch current list prices from the providers' own price APIs, check them, show "
        "what changes, and write them to the user catalog directory."
    )
    r.add_argument(
        "--provider",
        action="append",
        help=_refreshed_help(),
    )
    r.add_argument("--region", action="append", help="only these regions (repeatable)")
    r.add_argument(
        "--dry-run",
        action="store_true",
        help="fetch and report (price changes, new and vanished types); write nothing",
    )
    r.add_argument(
        "--force", action="store_true", help="replace data even if >20%% of offers vanish"
    )
    r.add_argument(
        "--no-discover",
        action="store_true",
        help="price the catalog's known instance types only; skip the listing APIs",
    )
    r.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_target_dir(r)
    r.epilog = (
        "New GPU instance types are discovered from each provider's listing API and priced "
        "when their GPU is in the spec table (unknown GPUs are reported, not added). "
        + _credentials_help()
        + OVERLAY_HELP
    )
    r.set_defaults(handler=run_refresh)


def _refreshed_help() -> str:
    """The clouds with a price API (with the key each needs), then those without."""
    from gpuplan.usecases.clouds.registry import entries

    listed = [e for e in entries() if e.catalog_file]
    with_api = [
        f"{e.provider.value} ({e.facts.price_key_env})"
        if e.facts.price_key_env
        else e.provider.value
        for e in listed
        if e.prices is not None
    ]
    without = [e.provider.value for e in listed if e.prices is None]
    if not without:
        return f"{', '.join(with_api)} (default: all)"
    skipped = f"{', '.join(without[:-1])} and {without[-1]}" if len(without) > 1 else without[0]
    have, are = ("have", "are") if len(without) > 1 else ("has", "is")
    return f"{', '.join(with_api)}; {skipped} {have} no price API and {are} skipped (default: all)"


def _credentials_help() -> str:
    """What each cloud's refresh needs, and the variables that point its APIs elsewhere."""
    facts = [facts_of(p) for p in registered()]
    needs = [f.credentials for f in facts if f.credentials]
    endpoints = [name for f in facts for name in f.endpoint_env]
    said = f"Credentials: {'; '.join(needs)}. " if needs else ""
    return said + (f"Endpoints: {', '.join(endpoints)}. " if endpoints else "")


def _import_parser(i: argparse.ArgumentParser) -> None:
    i.description = (
        "Read SkyPilot vms.csv catalogs (v6-v8 columns) from DIR/<cloud>/vms.csv or "
        "DIR/<cloud>.csv and write them as this tool's catalog files."
    )
    folders = " ".join(f"{p.value}/" for p in registered() if facts_of(p).skypilot)
    i.add_argument("directory", metavar="DIR", help=f"folder holding {folders} vms.csv")
    i.add_argument("--format", required=True, choices=["skypilot"], help="source format")
    i.add_argument("--provider", action="append", help="only these providers")
    i.add_argument("--dry-run", action="store_true", help="read and report; write nothing")
    i.add_argument(
        "--force", action="store_true", help="replace data even if >20%% of offers vanish"
    )
    i.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_target_dir(i)
    i.set_defaults(handler=run_import)


OVERLAY_HELP = (
    "The user catalog directory overlays the bundled catalog file by file: a provider file "
    "there replaces the bundled one for every command that reads the catalog. Offers not "
    "refreshed (other regions, failed regions) are carried forward into the written file."
)


def _add_target_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--catalog-dir",
        metavar="DIR",
        type=target_dir,
        help="user catalog directory to read and write (default: $GPUPLAN_CATALOG_DIR, "
        "else the XDG data dir, e.g. ~/.local/share/gpuplan/catalog)",
    )
    parser.epilog = parser.epilog or OVERLAY_HELP


def _clouds(values: list[str] | None) -> list[object]:
    from gpuplan.core.catalog.offers import Provider
    from gpuplan.usecases.catalog.lookup import parse_provider

    names = split_list(values)
    # Every cloud with a catalog file (Kubernetes nodes are priced from the clouds' files).
    return (
        [parse_provider(n) for n in names]
        if names
        else [p for p in Provider if facts_of(p).catalog_file]
    )


def _progress(line: str) -> None:
    # A progress line carries provider messages and region names: one line, escaped.
    print(f"gpuplan: {shown_line(line)}", file=sys.stderr, flush=True)


def run_refresh(args: argparse.Namespace) -> int:
    from gpuplan.core.catalog.offers import Provider
    from gpuplan.usecases.catalog.refresh import refresh_catalog

    providers = [p for p in _clouds(args.provider) if isinstance(p, Provider)]
    report = refresh_catalog(
        now=datetime.now(UTC),
        providers=providers,
        regions=split_list(args.region),
        catalog_dir=args.catalog_dir,
        dry_run=args.dry_run,
        force=args.force,
        discover=not args.no_discover,
        progress=_progress,
    )
    return _print_report(report, args.json)


def run_import(args: argparse.Namespace) -> int:
    from gpuplan.core.catalog.offers import Provider
    from gpuplan.usecases.catalog.refresh import import_skypilot

    providers = [p for p in _clouds(args.provider) if isinstance(p, Provider)]
    report, notices = import_skypilot(
        args.directory,
        now=datetime.now(UTC),
        providers=providers,
        catalog_dir=args.catalog_dir,
        dry_run=args.dry_run,
        force=args.force,
    )
    print_notices(notices)
    if not report.outcomes:
        raise InputError(f"{args.directory}: no SkyPilot vms.csv found for the providers asked")
    return _print_report(report, args.json)


def _print_report(report: RefreshReport, as_json: bool) -> int:
    if as_json:
        print_json(report_record(report))
    else:
        for outcome in report.outcomes:
            print("\n".join(_outcome_lines(outcome, report.dry_run)))
    return 0 if report.ok else 1


def report_record(report: RefreshReport) -> dict[str, object]:
    """The JSON shape of a refresh or import report."""
    return {
        "directory": str(report.directory),
        "dry_run": report.dry_run,
        "ok": report.ok,
        "providers": [
            {
                "provider": o.provider.value,
                "ok": o.ok,
                "skipped": o.skipped,
                "regions": o.regions,
                "failures": o.failures,
                "refused": o.refused,
                "written": str(o.written) if o.written else None,
                "added": ["/".join(x.key) for x in o.diff.added],
                "removed": ["/".join(x.key) for x in o.diff.removed],
                "changed": [
                    {
                        "offer": "/".join(m.key),
                        "pricing": m.pricing.value,
                        "old": m.old,
                        "new": m.new,
                        "change": m.change,
                    }
                    for m in o.diff.changed
                ],
                "unchanged": o.diff.unchanged,
                "new_types": o.new_types,
                "vanished_types": o.vanished_types,
                "unknown_gpus": [
                    {
                        "gpu": u.name,
                        "instance_types": list(u.instance_types),
                        "regions": list(u.regions),
                    }
                    for u in o.unknown_gpus
                ],
                "problems": [
                    {"severity": p.severity.value, "region": p.region, "message": p.message}
                    for p in o.problems
                ],
                "notes": o.notes,
            }
            for o in report.outcomes
        ],
    }


def _outcome_lines(o: ProviderOutcome, dry_run: bool) -> list[str]:
    if o.skipped:
        return [f"{o.provider.value}: skipped: {o.skipped}"]
    d = o.diff
    head = (
        f"{o.provider.value}: {plural(len(o.regions), 'region')} updated, "
        f"{len(o.failures)} failed; +{len(d.added)} added, -{len(d.removed)} removed, "
        f"{plural(len(d.changed), 'price change')}, "
        f"{d.unchanged} unchanged"
    )
    if not o.regions:
        head = (
            f"{o.provider.value}: no price read ({len(o.failures)} failed); "
            "the catalog is kept as it was"
        )
    if o.refused:
        head += "; REFUSED, nothing written"
    elif o.written:
        head += f"; wrote {o.written}"
    elif dry_run and o.regions:
        head += "; dry run, nothing written"
    lines = [head]
    for name in o.new_types:
        where = sorted({x.region for x in d.added if x.instance_type == name})
        shape = next(x for x in d.added if x.instance_type == name)
        lines.append(f"  new type: {name} ({shape.gpu_count:g}x {shape.gpu}) in {', '.join(where)}")
    lines.extend(f"  vanished type: {name}" for name in o.vanished_types)
    for move in d.largest_moves(5):
        pct = f"{(move.change or 0) * 100:+.1f}%"
        lines.append(
            f"  moved: {' '.join(move.key[1:])} {move.pricing.value} "
            f"{move.old} -> {move.new} ({pct})"
        )
    lines.extend(_failure_lines(o))
    for problem in o.problems:
        lines.append(f"  {problem.severity.value}: {problem}")
    lines.extend(f"  note: {n}" for n in o.notes[:10])
    return lines


def _failure_lines(o: ProviderOutcome) -> list[str]:
    """Each failure once: regions that failed for the same reason on one line."""
    by_reason: dict[str, list[str]] = {}
    for region, why in sorted(o.failures.items()):
        by_reason.setdefault(why, []).append(region)
    lines = []
    for why, regions in by_reason.items():
        where = "/" + ", ".join(regions) if any(regions) else ""
        lines.append(wrap(f"  error: {o.provider.value}{where}: {why}", indent="    "))
    return lines


def render_sources(offers: Sequence[Offer]) -> str:
    """The ``catalog --source`` table: where each offer's data was read from."""
    from gpuplan.cli.render import render_table

    rows = [
        [o.provider.value, o.instance_type, o.region, o.as_of.isoformat(), o.origin, o.source]
        for o in offers
    ]
    headers = ["provider", "instance", "region", "as_of", "from", "source"]
    # The provider (the instance names it) and the date (the source repeats it) go first;
    # the source wraps.
    table = render_table(headers, rows, drop=(0, 3), wrap_last=True)
    return table + f"\n\n{plural(len(offers), 'offer')}."
