"""pricing/README.md says "no spec row" only of GPUs that have none in gpus.toml (issue 37:
it said so of MI325X and MI355X after their rows were added)."""

from __future__ import annotations

import re
from pathlib import Path

from gpuplan.loaders.gpu_specs import load_gpu_table
from gpuplan.loaders.paths import bundled_pricing_dir

README = Path(__file__).resolve().parents[2] / "pricing" / "README.md"


def test_no_spec_row_is_said_only_of_gpus_without_one() -> None:
    names = {spec.name for spec in load_gpu_table(bundled_pricing_dir())}
    rows = [ln for ln in README.read_text(encoding="utf-8").splitlines() if "no spec row" in ln]
    assert rows  # the gap table still has such rows (the RTX PRO sizes)
    for row in rows:
        named = row.split("|")[2]
        listed = {n for n in names if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", named)}
        assert not listed, f"{sorted(listed)} have a spec row: {row}"
