"""AWS on moto (tests/fakes/moto_fixtures.py) for the lifecycle tests here."""

from tests.fakes.moto_fixtures import aws_env, lc_catalog, lc_catalog_dir, world  # noqa: F401
from tests.fakes.policy_fixtures import hook_server  # noqa: F401
