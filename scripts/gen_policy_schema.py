"""Regenerate policies/policy.schema.json and docs/policy.md's reference from the models.

Run after changing gpuplan/core/policy: ``python scripts/gen_policy_schema.py``;
``--check`` exits 1 when either file is stale (CI and a test run it). Editors validate
policy files against the schema (``# yaml-language-server: $schema=...``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from gpuplan.usecases.policy import policy_schema_text
from gpuplan.usecases.policy_docs import splice_reference

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "policies" / "policy.schema.json"
DOCS = ROOT / "docs" / "policy.md"


def expected() -> dict[Path, str]:
    return {
        SCHEMA: policy_schema_text(),
        DOCS: splice_reference(DOCS.read_text(encoding="utf-8")),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the policy schema and reference.")
    parser.add_argument("--check", action="store_true", help="exit 1 when a file is stale")
    args = parser.parse_args(argv)
    stale = 0
    for path, text in expected().items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            print(f"{path.relative_to(ROOT)} is up to date")
        elif args.check:
            print(
                f"{path.relative_to(ROOT)} is stale: run python scripts/gen_policy_schema.py",
                file=sys.stderr,
            )
            stale += 1
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
