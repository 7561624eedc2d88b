"""The test CA (TLS for the Cost Management fake: bearer tokens travel over https only)."""

from tests.fakes.fixtures import ca_file, test_ca  # noqa: F401
