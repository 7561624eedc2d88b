"""Fixtures shared by the provider tests: loopback only, the bundled catalog, a test CA.

Import them into a test folder's conftest. gRPC's C core opens its own sockets, so the
loopback guard covers the Python (HTTP) paths; the gRPC fakes listen on 127.0.0.1.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trustme

from gpuplan.core.catalog.query import Catalog
from gpuplan.loaders.catalog import load_catalog


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
