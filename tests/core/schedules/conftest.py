"""The policy file writer (tests/fakes/policy_fixtures.py) for the policy tests."""

from tests.fakes.policy_fixtures import write_policy  # noqa: F401
