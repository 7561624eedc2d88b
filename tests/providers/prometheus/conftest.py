"""A Prometheus HTTP API fake on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.fakes.http import serve
from tests.fakes.prometheus import PrometheusFake


@dataclass
class PromWorld:
    fake: PrometheusFake
    url: str


@pytest.fixture
def prom() -> Iterator[PromWorld]:
    fake = PrometheusFake()
    with serve(fake) as url:
        yield PromWorld(fake, url)
