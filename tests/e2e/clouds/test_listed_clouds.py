"""The one list of clouds: each listed package's facts are light and its entry is built
from them, so the fast path prices every listed cloud without the registry."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

from gpuplan.core.clouds import facts_of, registered
from gpuplan.usecases.clouds import entries
from gpuplan.usecases.clouds import registry as cloud_registry

LIGHT = """
import json, sys
from gpuplan.usecases.clouds.entries import register_facts
register_facts()
from gpuplan.core.clouds import registered
heavy = ("pydantic", "boto3", "botocore", "google", "azure", "httpx", "textual")
print(json.dumps({
    "clouds": [p.value for p in registered()],
    "loaded": sorted(m for m in sys.modules if m.split(".")[0] in heavy),
    "registry": "gpuplan.usecases.clouds.registry" in sys.modules,
}))
"""


def test_registering_the_facts_loads_no_sdk_no_pydantic_and_no_registry() -> None:
    done = subprocess.run(
        [sys.executable, "-c", LIGHT], capture_output=True, text=True, timeout=60, check=True
    )
    found = json.loads(done.stdout)
    listed = [importlib.import_module(f"{p}.facts").FACTS.provider.value for p in entries.CLOUDS]
    assert found == {"clouds": listed, "loaded": [], "registry": False}


def test_each_listed_entry_is_built_from_its_packages_facts() -> None:
    by_provider = cloud_registry.entries_by_provider()
    for package in entries.CLOUDS:
        facts = importlib.import_module(f"{package}.facts").FACTS
        entry = importlib.import_module(f"{package}.entry").ENTRY
        assert entry.described is facts, package
        assert by_provider[facts.provider] is entry, package
        # The registered facts are the package's, with what only the entry knows.
        registered_facts = facts_of(facts.provider)
        assert registered_facts.catalog_file == facts.catalog_file
        assert registered_facts.regions is facts.regions
        assert registered_facts.secret_env == facts.secret_env
        assert registered_facts.scope_section is entry.scope_section


def test_the_list_order_is_the_registry_order() -> None:
    listed = [importlib.import_module(f"{p}.facts").FACTS.provider for p in entries.CLOUDS]
    assert list(registered())[: len(listed)] == listed
    assert [e.provider for e in entries.built_in()][: len(listed)] == listed


def test_registering_the_facts_again_keeps_the_entries_facts() -> None:
    before = {p: facts_of(p) for p in registered()}
    entries.register_facts()
    assert {p: facts_of(p) for p in registered()} == before
