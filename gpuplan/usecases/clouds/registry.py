"""The registered clouds: the listed ones (:func:`~gpuplan.usecases.clouds.entries.built_in`)
and any entry registered at run time.

Every per-cloud table reads this module: the adapter builder's entries
(:func:`gpuplan.usecases.clouds.adapters.default_registry`), the price fetchers and source
names of ``catalog refresh``, the type discoverers, the service names of the
per-service caps and the lines for a scope that finds nothing. Registering an entry
also hands its lower-layer facts (catalog file, region naming) to
:mod:`gpuplan.core.clouds`, which the loaders and the core read; so a cloud registered at
run time is its package and one entry, nothing else (docs/architecture.md, "Adding a
cloud", for one shipped in gpuplan). :mod:`gpuplan.usecases.policy` imports this module,
so a policy's ``scope.<name>`` of any entry is known wherever policies are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from gpuplan.core import clouds
from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle import actions
from gpuplan.core.policy import bill_settings, metrics_settings
from gpuplan.providers.cloud_entry import CloudEntry, Discoverer, Fetcher
from gpuplan.usecases.clouds import entries as listed
from gpuplan.usecases.clouds import extras

_ENTRIES: dict[Provider, CloudEntry] = {}


def register(entry: CloudEntry) -> None:
    """Add (or replace) one cloud's entry: its provider is defined, its facts go to
    :mod:`gpuplan.core.clouds`, its own monitoring becomes ``idle.metrics.<name>``, its
    bill keys are keys of ``bill``, its SDK modules are its extra's."""
    Provider.define(entry.provider)
    clouds.register(entry.facts)
    actions.register(entry.provider, entry.steps)
    replaced = _ENTRIES.get(entry.provider)
    name = entry.provider.value
    if entry.metrics is not None:
        metrics_settings.register_section(name, entry.metrics.settings, defaulted=True)
    elif replaced is not None and replaced.metrics is not None:
        metrics_settings.unregister_section(name)
    if entry.bill_keys is not None:
        bill_settings.register_keys(name, entry.bill_keys)
    else:
        bill_settings.unregister_keys(name)
    extras.register_modules(entry.sdk_modules, entry.extra)
    _ENTRIES[entry.provider] = entry


def unregister(provider: Provider) -> None:
    """Drop a cloud registered at run time (a cloud a test registered); built-ins stay."""
    if any(e.provider == provider for e in listed.built_in()):
        raise ValueError(f"{provider.value} is built in")
    dropped = _ENTRIES.pop(provider, None)
    if dropped is not None and dropped.metrics is not None:
        metrics_settings.unregister_section(provider.value)
    bill_settings.unregister_keys(provider.value)
    clouds.unregister(provider)
    actions.unregister(provider)
    Provider.forget(provider.value)


def entries() -> tuple[CloudEntry, ...]:
    """Every registered entry: the built-in ones first, in their order."""
    return tuple(_ENTRIES.values())


def entries_by_provider() -> Mapping[Provider, CloudEntry]:
    """The registered entries by provider (a read-only view)."""
    return MappingProxyType(_ENTRIES)


def entry_of(provider: Provider) -> CloudEntry:
    """The entry of a registered cloud; KeyError otherwise."""
    return _ENTRIES[provider]


def fetchers() -> dict[Provider, Fetcher]:
    """Each registered cloud's price fetcher, where it has one."""
    return {e.provider: e.prices for e in entries() if e.prices is not None}


def discoverers(environ: Mapping[str, str]) -> dict[Provider, Discoverer]:
    """Each registered cloud's type listing that ``environ`` configures."""
    found: dict[Provider, Discoverer] = {}
    for entry in entries():
        listing = entry.discoverer(environ) if entry.discoverer is not None else None
        if listing is not None:
            found[entry.provider] = listing
    return found


# Every listed entry is registered on import: its policy sections, facts and action row
# (its facts first, as the shells register them, so its provider is defined before any
# module that the entries import reads it).
listed.register_facts()
for _entry in listed.built_in():
    register(_entry)
