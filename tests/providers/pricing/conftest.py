"""Fixtures for the refresh tests: a small catalog folder and an isolated user data dir."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import write_catalog


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    # Never read or write the developer's real user catalog (the loopback-only network
    # guard is in tests/conftest.py).
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("GPUPLAN_CATALOG_DIR", raising=False)
    yield


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    """A complete small catalog (the shared test rows) that refresh reads and writes."""
    return write_catalog(tmp_path / "catalog")
