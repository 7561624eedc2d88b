"""The webhook endpoint fixture for the policy examples (tests/fakes/policy_fixtures.py)."""

from tests.fakes.policy_fixtures import hook_server  # noqa: F401
