"""A cloud shipped in gpuplan is its package and one line in the registry's list.

The proof a new contributor would make: copy gpuplan into a scratch tree, copy Toycloud
(tests/fakes/toycloud/: its ``facts`` and ``entry`` modules and the rest) into
``gpuplan/providers/toy/`` with its catalog file beside the bundled ones, add its
package to ``CLOUDS`` (one line), and change nothing else. The import-linter contracts
stay kept (the entry type lives below the providers, so the cloud's package builds its
own entry), and a fresh process on that tree knows the cloud: the registry lists it, the
policy schema has ``scope.toy`` and ``idle.metrics.toy``, ``policy check`` checks its
section, ``fleet`` and ``stop-idle`` (dry run) survey it, ``catalog`` lists its offers
from its data file, and so does ``catalog`` in a process that never loads the registry
(the fast path, which reads only the listed clouds' facts modules).
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TOY = ROOT / "tests" / "fakes" / "toycloud"
LINE = '    "gpuplan.providers.toy",\n'
LIST_END = ')\n"""The built-in clouds, in the order'

CHECK = """
import json, sys
from pathlib import Path
from gpuplan.cli.main import main
from gpuplan.core.catalog.offers import Provider
from gpuplan.usecases.clouds import registry as cloud_registry
from gpuplan.usecases.policy import policy_schema

folder = Path(sys.argv[1])
toy = Provider("toy")
entry = cloud_registry.entry_of(toy)
assert entry.scopes.__module__ == "gpuplan.providers.toy.adapter", entry.scopes.__module__
assert "toy" in policy_schema()["$defs"]["Scope"]["properties"]
assert "toy" in policy_schema()["$defs"]["MetricsSettings"]["properties"]
policy = folder / "team.yaml"
policy.write_text(
    "version: 1\\nname: toy-team\\nscope:\\n  toy:\\n    regions: [us-toy1]\\n"
    "idle:\\n  action: stop\\n  allow_data_loss: false\\n"
)
codes = {"check": main(["policy", "check", str(policy)])}
codes["fleet"] = main(["fleet", "--policy", str(policy), "--json"])
codes["stop-idle"] = main(["stop-idle", "--policy", str(policy), "--json", "--db",
                           str(folder / "ledger.db")])
print("CODES=" + json.dumps(codes))
"""

CATALOG = """
import sys
# a policy reader's process: the registry loaded
from gpuplan.usecases.clouds import registry as cloud_registry
from gpuplan.cli.main import main
sys.exit(main(["catalog", "--provider", "toy", "--json"]))
"""

FAST_CATALOG = """
import sys
from gpuplan.cli.main import main
code = main(["catalog", "--provider", "toy", "--json"])
assert "gpuplan.usecases.clouds.registry" not in sys.modules, "the fast path loaded the registry"
sys.exit(code)
"""


def _tree(tmp_path: Path) -> Path:
    """gpuplan, its bundled pricing data and pyproject.toml, with Toycloud in tree."""
    tree = tmp_path / "tree"
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "gpuplan", tree / "gpuplan", ignore=skip)
    shutil.copytree(ROOT / "pricing", tree / "pricing", ignore=skip)
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    package = tree / "gpuplan" / "providers" / "toy"
    package.mkdir()
    for source in TOY.iterdir():
        if source.suffix == ".py":
            text = source.read_text(encoding="utf-8")
            text = text.replace("tests.fakes.toycloud", "gpuplan.providers.toy")
            text = text.replace("tests/fakes/toycloud/", "gpuplan/providers/toy/")
            (package / source.name).write_text(text, encoding="utf-8")
        elif source.suffix == ".csv":
            shutil.copy(source, tree / "pricing" / source.name)  # the catalog's data file
        elif source.is_file():
            shutil.copy(source, package / source.name)
    return tree


def _add_the_entry(tree: Path) -> list[str]:
    """The one line in CLOUDS; the changed lines of gpuplan."""
    listing = tree / "gpuplan" / "usecases" / "clouds" / "entries.py"
    before = listing.read_text(encoding="utf-8")
    assert before.count(LIST_END) == 1
    after = before.replace(LIST_END, LINE + LIST_END)
    listing.write_text(after, encoding="utf-8")
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def _run(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree), "GPUPLAN_FAKE_FLEET": ""}
    env.pop("GPUPLAN_FAKE_FLEET")
    return subprocess.run(
        args, cwd=tree, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_an_in_tree_cloud_is_its_package_and_one_entry(tmp_path: Path) -> None:
    tree = _tree(tmp_path)
    assert _add_the_entry(tree) == ["+" + LINE.rstrip("\n")]
    python = sys.executable

    where = _run(tree, python, "-c", "import gpuplan; print(gpuplan.__file__)")
    assert where.stdout.strip() == str(tree / "gpuplan" / "__init__.py"), where.stderr

    contracts = _run(tree, str(Path(python).with_name("lint-imports")))
    assert contracts.returncode == 0, contracts.stdout[-3000:]
    assert "0 broken" in contracts.stdout

    checked = _run(tree, python, "-c", CHECK, str(tmp_path))
    assert checked.returncode == 0, checked.stderr[-3000:]
    codes = json.loads(checked.stdout.rsplit("CODES=", 1)[1])
    assert codes == {"check": 0, "fleet": 0, "stop-idle": 0}, checked.stderr[-3000:]

    for script in (CATALOG, FAST_CATALOG):
        listed = _run(tree, python, "-c", script)
        assert listed.returncode == 0, listed.stderr[-3000:]
        rows = json.loads(listed.stdout)
        offers = rows["offers"] if isinstance(rows, dict) else rows
        assert {(o["provider"], o["region"]) for o in offers} == {
            ("toy", "eu-toy1"),
            ("toy", "us-toy1"),
        }
