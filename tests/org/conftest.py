"""Fixtures for the organisation-scale tests: fake AWS credentials and the small catalog."""

from __future__ import annotations

from tests.cloudfakes.fixtures import ca_file, catalog, test_ca  # noqa: F401
from tests.lifecycle.conftest import aws_env, lc_catalog_dir  # noqa: F401
from tests.providers_azure.conftest import azure  # noqa: F401
from tests.providers_gcp.conftest import gcp  # noqa: F401
