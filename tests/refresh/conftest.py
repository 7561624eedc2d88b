"""Fixtures for the refresh tests: a small catalog folder, an isolated user data dir, and a
guard that turns any non-loopback connection into a loud failure."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_catalog

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else str(address)
    if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost"):
        raise OSError(f"test tried to reach {host}: only loopback is allowed")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
    # Never read or write the developer's real user catalog.
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("GPUPLAN_CATALOG_DIR", raising=False)
    yield


@pytest.fixture
def catalog_dir(tmp_path: Path) -> Path:
    """A complete small catalog (the shared test rows) that refresh reads and writes."""
    return write_catalog(tmp_path / "catalog")
