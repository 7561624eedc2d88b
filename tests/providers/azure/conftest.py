"""The Azure world on wire fakes over TLS (tests/fakes/azure_world.py) for the adapter tests."""

from tests.fakes.azure_world import azure  # noqa: F401
from tests.fakes.fixtures import ca_file, catalog, test_ca  # noqa: F401
from tests.fakes.policy_fixtures import hook_server  # noqa: F401
