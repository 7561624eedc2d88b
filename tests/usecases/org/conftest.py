"""Fixtures for the organisation-scale tests: fake AWS credentials and the small catalog."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.azure_world import azure  # noqa: F401
from tests.fakes.fixtures import ca_file, catalog, test_ca  # noqa: F401
from tests.fakes.gcp_world import gcp  # noqa: F401
from tests.fakes.moto_fixtures import aws_env, lc_catalog_dir  # noqa: F401
from tests.usecases.org.aws_org import Org, build_org


@pytest.fixture
def org_only(aws_env: None) -> Iterator[Org]:  # noqa: F811
    """A bare organisation on moto (an ``ml`` OU, one member account with the role)."""
    from moto import mock_aws

    with mock_aws():
        yield build_org({"alpha": True})
