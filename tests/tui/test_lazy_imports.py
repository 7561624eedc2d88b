"""Start-up stays light: the CLI does not load Textual, the catalog does not load SDKs.

Deferred imports are invisible to import-linter, so these look at ``sys.modules`` in a
fresh interpreter (the harlequin way).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import write_catalog
from tests.tui.conftest import write_policies

PROBE = """
import asyncio, json, sys
from datetime import UTC, datetime
from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.context import TuiContext

def clock():
    return datetime(2026, 12, 2, 12, tzinfo=UTC)

def loaded():
    return sorted(m for m in sys.modules if m.split(".")[0] in {"boto3", "botocore",
                  "google", "azure"} or m.startswith("gpuplan.tui.fleet"))

async def main():
    from pathlib import Path
    tmp = Path(sys.argv[2])
    context = TuiContext(catalog_dir=sys.argv[1], clock=clock, policies_dir=tmp / "policies",
                         ledger_path=tmp / "ledger.sqlite3")
    app = GpuplanApp(context)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        rows = app.screen.query_one("#offers").row_count
        at_catalog = loaded()
        await pilot.press("2", "enter")
        await app.workers.wait_for_complete()
        await pilot.press("escape", "4")
        await pilot.pause()
        print(json.dumps({"rows": rows, "catalog": at_catalog, "others": loaded(),
                          "screen": type(app.screen).__name__}))

asyncio.run(main())
"""


def loaded_after(code: str, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    return result.stdout


def test_cli_start_up_does_not_import_textual() -> None:
    out = loaded_after(
        "import sys, gpuplan.cli.main as m; m.build_parser();"
        "print(sorted(n for n in sys.modules if n.startswith(('textual', 'gpuplan.tui'))))"
    )
    assert out.strip() == "[]"


def test_catalog_estimate_and_policies_load_no_cloud_sdk(tmp_path: Path) -> None:
    catalog = write_catalog(tmp_path / "pricing")
    write_policies(tmp_path / "policies")
    report = json.loads(loaded_after(PROBE, str(catalog), str(tmp_path)).strip().splitlines()[-1])
    assert report["rows"] == 8
    assert report["catalog"] == []
    # Estimate and Policies work offline too: still no SDK, and no Fleet code.
    assert report["screen"] == "PoliciesScreen"
    assert report["others"] == []
