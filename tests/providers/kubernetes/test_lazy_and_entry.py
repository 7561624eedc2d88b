"""lightkube loads only where a Kubernetes scope is built; the registry entry's shape."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gpuplan.core import clouds
from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.instances import Action
from gpuplan.core.policy.kubernetes_scope import KubernetesScope
from gpuplan.usecases.clouds import registry as cloud_registry

ROOT = Path(__file__).resolve().parents[3]


def test_estimate_and_the_registry_do_not_load_lightkube() -> None:
    code = (
        "import sys, io, contextlib\n"
        "from gpuplan.cli.main import main\n"
        "from gpuplan.usecases.clouds import registry\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['estimate', '--params', '7B', '--tokens', '1B', '--json'])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('lightkube', 'yaml')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)  # fmt: skip
    assert "lightkube" not in out.stdout


def test_the_entry_is_registered_with_its_section_and_role() -> None:
    entry = cloud_registry.entry_of(Provider("kubernetes"))
    assert entry.scope_section is KubernetesScope
    assert clouds.scope_section("kubernetes") == (entry.provider, KubernetesScope)
    assert entry.handles(Action.STOP)
    # terminate reclaims as stop does: a workload's owner is never deleted
    assert "never deletes" in entry.actions[Action.TERMINATE]
    assert not entry.handles(Action.HIBERNATE) and not entry.handles(Action.DEALLOCATE)
    assert (ROOT / entry.permission_file).is_file()
    assert entry.catalog_file == ""  # nodes are priced from the clouds' catalogs
