"""AWS on moto (tests/fakes/moto_fixtures.py, and a moto_server on loopback from
tests/fakes/moto_server.py) for the lifecycle use cases, and the policy
writer, ledger path and webhook endpoint (tests/fakes/policy_fixtures.py) for budget."""

from tests.fakes.moto_fixtures import aws_env, lc_catalog, lc_catalog_dir, world  # noqa: F401
from tests.fakes.moto_server import _moto_server_process, server  # noqa: F401
from tests.fakes.policy_fixtures import (  # noqa: F401
    closed_port_url,
    db_path,
    hook_server,
    write_policy,
)
