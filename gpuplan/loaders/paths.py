"""Where the bundled data lives.

In a wheel the catalog ships as ``gpuplan/pricing``; in a source checkout (editable
install, tests) it is the top-level ``pricing/`` folder. ``GPUPLAN_CATALOG_DIR`` points
elsewhere (a test's corrupted copy, a team's own catalog).
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent

CATALOG_DIR_ENV = "GPUPLAN_CATALOG_DIR"


def bundled_pricing_dir() -> Path:
    """The pricing folder shipped with this installation."""
    for candidate in (_PACKAGE / "pricing", _PACKAGE.parent / "pricing"):
        if (candidate / "gpus.toml").is_file():
            return candidate
    raise FileNotFoundError(
        f"bundled pricing data not found next to {_PACKAGE}: the installation is incomplete"
    )
