"""The local webhook endpoint (tests/fakes/policy_fixtures.py) for the webhook tests."""

from tests.fakes.policy_fixtures import closed_port_url, hook_server  # noqa: F401
