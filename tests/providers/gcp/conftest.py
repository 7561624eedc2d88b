"""The GCP world on wire fakes (tests/fakes/gcp_world.py) for the adapter tests."""

from tests.fakes.fixtures import catalog  # noqa: F401
from tests.fakes.gcp_world import gcp  # noqa: F401
from tests.fakes.policy_fixtures import hook_server  # noqa: F401
