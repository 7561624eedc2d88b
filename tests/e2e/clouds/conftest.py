"""End-to-end fixtures: the test CA, the loopback guard (for this process), the fakes,
fake AWS credentials, the small catalog and a moto_server on loopback (``server``)."""

from collections.abc import Iterator

import pytest
import trustme

from tests.e2e.clouds.harness import Clouds, running_clouds
from tests.fakes.fixtures import ca_file, test_ca  # noqa: F401
from tests.fakes.moto_fixtures import aws_env, lc_catalog_dir  # noqa: F401
from tests.fakes.moto_server import _moto_server_process, server  # noqa: F401


@pytest.fixture
def clouds(test_ca: trustme.CA) -> Iterator[Clouds]:  # noqa: F811
    with running_clouds(test_ca) as world:
        yield world
