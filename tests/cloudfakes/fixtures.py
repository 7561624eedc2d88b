"""Fixtures shared by the provider tests: loopback only, the bundled catalog, a test CA.

Import them into a test folder's conftest. gRPC's C core opens its own sockets, so the
loopback guard covers the Python (HTTP) paths; the gRPC fakes listen on 127.0.0.1.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme

from gpuplan.core.catalog import Catalog
from gpuplan.loaders.catalog import load_catalog

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: Any) -> Any:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0]
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if not loopback:
            raise OSError(f"test tried to reach {address!r}: only loopback is allowed")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
    yield


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="session")
def test_ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="session")
def ca_file(test_ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    test_ca.cert_pem.write_to_path(str(path))
    return path
