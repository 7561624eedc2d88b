"""Refresh the catalog from the clouds' price APIs, or import a SkyPilot catalog.

For each provider: read the current catalog (user files over the bundle), fetch quotes
for the regions and instance types it knows (or the regions asked for), build offers on
the known shapes, pass the gates of :mod:`gpuplan.core.catalog.refresh`, merge the refreshed
regions into the provider's data and write the file atomically into the user catalog
directory. A provider or region that fails is reported and keeps its previous data; the
rest is still written. ``dry_run`` computes and reports everything and writes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

from gpuplan.core.catalog.discovery import NewShapes, UnknownGpu, new_shapes
from gpuplan.core.catalog.offers import BASE_MODELS, Offer, PricingModel, Provider
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.catalog.refresh import (
    FetchResult,
    NotConfigured,
    OfferDiff,
    Problem,
    Quote,
    Severity,
    build_offers,
    carry_unread,
    diff_offers,
    merge_regions,
    shapes_by_type,
    vanish_problem,
)
from gpuplan.core.catalog.regions import region_name_problem
from gpuplan.core.errors import InputError
from gpuplan.core.wording import plural
from gpuplan.loaders.catalog import load_catalog, user_catalog_dir
from gpuplan.loaders.catalog_writer import write_provider_file
from gpuplan.providers.cloud_entry import Discoverer, Fetcher
from gpuplan.providers.cloud_entry import FetchRequest as FetchRequest  # re-exported
from gpuplan.providers.pricing import Progress, no_progress
from gpuplan.usecases.catalog.refresh_types import (
    default_discoverers,
    find_types,
    report_discovery,
)
from gpuplan.usecases.clouds import registry as cloud_registry
from gpuplan.usecases.clouds.extras import MissingExtra, needs_extra


@dataclass(frozen=True)
class Target:
    """Where and how a refresh or import writes."""

    directory: Path
    dry_run: bool = False
    force: bool = False


@dataclass
class ProviderOutcome:
    provider: Provider
    diff: OfferDiff = field(default_factory=OfferDiff)
    problems: list[Problem] = field(default_factory=list)
    regions: list[str] = field(default_factory=list)
    """Regions whose new prices were accepted."""
    failures: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    written: Path | None = None
    refused: bool = False
    new_types: list[str] = field(default_factory=list)
    """Instance types the refresh adds that the catalog did not have."""
    vanished_types: list[str] = field(default_factory=list)
    """Instance types the catalog had that are gone after the refresh."""
    unknown_gpus: list[UnknownGpu] = field(default_factory=list)
    skipped: str | None = None
    """Why this provider was not refreshed (no price API, no key): one line, not a failure;
    its catalog file stays as it is."""

    @property
    def ok(self) -> bool:
        errors = any(p.severity is Severity.ERROR for p in self.problems)
        return not (self.failures or errors or self.refused)


@dataclass
class RefreshReport:
    outcomes: list[ProviderOutcome]
    directory: Path
    dry_run: bool

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outcomes)


def default_fetchers() -> dict[Provider, Fetcher]:
    """Every registered cloud's price API; each imports its SDK only when called."""
    return cloud_registry.fetchers()


@dataclass(frozen=True)
class _Run:
    catalog: Catalog
    target: Target
    now: datetime
    fetchers: Mapping[Provider, Fetcher]
    discoverers: Mapping[Provider, Discoverer]
    progress: Progress


def refresh_catalog(
    *,
    now: datetime,
    providers: Sequence[Provider] = tuple(Provider),
    regions: Iterable[str] = (),
    catalog_dir: str | os.PathLike[str] | None = None,
    dry_run: bool = False,
    force: bool = False,
    fetchers: Mapping[Provider, Fetcher] | None = None,
    discoverers: Mapping[Provider, Discoverer] | None = None,
    discover: bool = True,
    progress: Progress = no_progress,
) -> RefreshReport:
    """Discover, fetch, check, diff and (unless ``dry_run``) write each provider's prices.

    Without ``discoverers``, the default listing APIs run only when ``fetchers`` are the
    default ones too (injected fetchers are a test or an import: nothing else is called).
    """
    wanted = tuple(sorted({r.strip() for r in regions if r.strip()}))
    for region in wanted:  # before any cloud is asked: a garbage name is bad input
        why = region_name_problem(region)
        if why is not None:
            raise InputError(f"--region: {why}")
    if discoverers is None:
        discoverers = default_discoverers() if fetchers is None else {}
    run = _Run(
        catalog=load_catalog(catalog_dir),
        target=Target(user_catalog_dir(catalog_dir), dry_run, force),
        now=now,
        fetchers=fetchers if fetchers is not None else default_fetchers(),
        discoverers=discoverers if discover else {},
        progress=progress,
    )
    outcomes = [_refresh_provider(run, provider, wanted) for provider in providers]
    return RefreshReport(outcomes=outcomes, directory=run.target.directory, dry_run=dry_run)


def _refresh_provider(run: _Run, provider: Provider, wanted: tuple[str, ...]) -> ProviderOutcome:
    current = [o for o in run.catalog.offers if o.provider is provider]
    scope = wanted or tuple(sorted({o.region for o in current}))
    known = shapes_by_type(current)
    found, problems = find_types(run.discoverers.get(provider), provider, scope, run.progress)
    extra = new_shapes(provider, found.found, run.catalog.gpus, known) if found else NewShapes()
    shapes = {**extra.shapes, **known}
    fetcher = run.fetchers.get(provider)
    if fetcher is None:
        why = f"no price API in gpuplan; the bundled list prices stay ({_page(current)})"
        return _skipped(run, provider, why, problems)
    try:
        with needs_extra(f"{provider.value} prices"):
            fetched = fetcher(_request(current, scope, run, shapes, extra))
    except MissingExtra:
        raise
    except NotConfigured as exc:
        return _skipped(run, provider, str(exc), problems)
    except Exception as exc:  # any SDK or network failure: report it, keep the old data
        outcome = ProviderOutcome(provider, failures={"": _describe(exc)}, problems=problems)
        run.progress(f"{provider.value}: failed: {outcome.failures['']}")
        return outcome
    # A new type is priced only where the listing offers it.
    fetched.quotes = [
        q
        for q in fetched.quotes
        if q.instance_type not in extra.seen or q.region in extra.seen[q.instance_type]
    ]
    outcome = apply_quotes(
        provider, current, fetched, run.target, as_of=run.now.date(), shapes=shapes
    )
    outcome.problems[:0] = problems
    if found is not None:
        report_discovery(outcome, found, extra, current)
    return outcome


def _skipped(run: _Run, provider: Provider, why: str, problems: list[Problem]) -> ProviderOutcome:
    run.progress(f"{provider.value}: skipped: {why}")
    return ProviderOutcome(provider, problems=problems, skipped=why)


def _page(current: Sequence[Offer]) -> str:
    """The day the bundled rows were read, for the skip line."""
    if not current:
        return "none in the catalog"
    oldest = min(o.as_of for o in current)
    return f"read {oldest.isoformat()} or later; edit the file from the pricing page"


def _request(
    current: Sequence[Offer],
    scope: tuple[str, ...],
    run: _Run,
    shapes: Mapping[str, Offer],
    extra: NewShapes,
) -> FetchRequest:
    known = {
        (o.instance_type, o.region): frozenset(m for m in PricingModel if o.price(m))
        for o in current
    }
    for name, regions in extra.seen.items():
        known.update({(name, region): BASE_MODELS for region in regions})
    if current or shapes:
        name = next(iter(shapes.values())).provider.value if shapes else current[0].provider.value
        run.progress(
            f"{name}: fetching {plural(len(shapes), 'type')} in {plural(len(scope), 'region')}"
        )
    return FetchRequest(scope, tuple(sorted(shapes)), shapes, run.now, run.progress, known)


def apply_quotes(
    provider: Provider,
    current: Sequence[Offer],
    fetched: FetchResult,
    target: Target,
    *,
    as_of: date,
    shapes: Mapping[str, Offer] | None = None,
    source: str | None = None,
    reject_region: bool = True,
) -> ProviderOutcome:
    """Gates, merge, diff and write for one provider's fetched quotes."""
    quotes: list[Quote] = [q for q in fetched.quotes if q.region in fetched.regions]
    built, problems = build_offers(
        provider,
        shapes if shapes is not None else shapes_by_type(current),
        quotes,
        as_of=as_of,
        source=source or cloud_registry.entry_of(provider).price_source,
        reject_region=reject_region,
    )
    rejected = {p.region for p in problems if p.severity is Severity.ERROR}
    fresh = {r: built.get(r, []) for r in fetched.regions if r not in rejected}
    fresh = carry_unread(current, fresh, fetched.models)
    outcome = ProviderOutcome(
        provider,
        problems=problems,
        regions=sorted(fresh),
        failures=dict(fetched.failures),
        notes=list(fetched.notes),
    )
    merged = merge_regions(current, fresh)
    # Compared where prices were read: an unread region's offers are kept, not "unchanged".
    outcome.diff = diff_offers(
        [o for o in current if o.region in fresh], [o for o in merged if o.region in fresh]
    )
    before, after = {o.instance_type for o in current}, {o.instance_type for o in merged}
    outcome.new_types, outcome.vanished_types = sorted(after - before), sorted(before - after)
    old_scope = [o for o in current if o.region in fresh]
    vanish = vanish_problem(
        provider, old_scope, [o for v in fresh.values() for o in v], force=target.force
    )
    if vanish is not None:
        outcome.problems.append(vanish)
        outcome.refused = vanish.severity is Severity.ERROR
    if fresh and not target.dry_run and not outcome.refused:
        outcome.written = write_provider_file(target.directory, provider, merged)
    return outcome


def _describe(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


def import_skypilot(
    directory: str | os.PathLike[str],
    *,
    now: datetime,
    providers: Sequence[Provider] = tuple(Provider),
    catalog_dir: str | os.PathLike[str] | None = None,
    dry_run: bool = False,
    force: bool = False,
) -> tuple[RefreshReport, list[str]]:
    """Import SkyPilot vms.csv files through the same gates, merge and writer as refresh.

    Shapes the catalog already knows win over SkyPilot's (which has, e.g., 12 GPUs for an
    8-GPU Azure size); a disagreement is noted. A bad price is dropped with a warning.
    """
    from gpuplan.loaders.skypilot import SOURCE, find_vms_csv, import_provider

    target = Target(user_catalog_dir(catalog_dir), dry_run, force)
    catalog = load_catalog(catalog_dir)
    notices: list[str] = []
    outcomes = []
    for provider in providers:
        path = find_vms_csv(Path(directory), provider)
        if path is None:
            continue
        imported = import_provider(path, provider, catalog.gpus, as_of=now.date())
        notices.extend(imported.notices)
        current = [o for o in catalog.offers if o.provider is provider]
        shapes = _import_shapes(str(path), imported.shapes, current, notices)
        fetched = FetchResult(provider, quotes=imported.quotes, regions=imported.regions)
        outcomes.append(
            apply_quotes(
                provider,
                current,
                fetched,
                target,
                as_of=now.date(),
                shapes=shapes,
                source=SOURCE,
                reject_region=False,
            )
        )
    return RefreshReport(outcomes=outcomes, directory=target.directory, dry_run=dry_run), notices


def _import_shapes(
    path: str, theirs: Mapping[str, Offer], current: Sequence[Offer], notices: list[str]
) -> dict[str, Offer]:
    """SkyPilot's shapes, overridden by the catalog's where it knows the type."""
    shapes = dict(theirs)
    for name, known in shapes_by_type(current).items():
        other = shapes.get(name)
        if other is not None and other.gpu_count != known.gpu_count:
            notices.append(
                f"{path}: {name} lists {other.gpu_count:g} GPUs, the catalog "
                f"{known.gpu_count:g}; kept the catalog's shape"
            )
        shapes[name] = known
    return shapes
