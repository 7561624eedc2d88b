"""Building the provider registry loads no cloud SDK: factories import them when called."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
from gpuplan.usecases.clouds.adapters import default_registry
from gpuplan.usecases.clouds import entries as cloud_adapters  # noqa: F401
from gpuplan.providers import catalog_view, prometheus  # noqa: F401
from gpuplan.providers.gcp import machines, monitoring  # noqa: F401
from gpuplan.providers.azure import vms, metrics  # noqa: F401
default_registry()
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("google", "azure", "grpc"))
print(",".join(heavy))
"""


def test_registry_and_mapping_modules_load_no_cloud_sdk() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == ""
