"""Writes the generated audit trace set to a folder, for ``gpuplan audit --traces``.

The same generator the audit tests check against (``tests/core/audit``): one or more
instances of each workload class whose dollar split the generator knows (input-bound,
one GPU of eight busy, notebook, forgotten, well-used), per-GPU columns (format v2),
priced from the catalog. docs/lifecycle.md's worked example is seed 1, one per class.

Usage: python scripts/write_audit_traces.py DIR [--seed 1] [--per-class 1] [--days 7]
"""

from __future__ import annotations

import argparse
import sys
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuplan.core.lifecycle.simulation.audit_traces import AUDIT_CLASSES, generate_audit_fleet
from gpuplan.loaders.catalog import load_catalog
from gpuplan.loaders.traces import write_traces
from gpuplan.usecases.clouds.entries import register_facts
from gpuplan.usecases.lifecycle.simulate import catalog_prices

register_facts()  # every listed cloud's facts, as the CLI registers them first


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--per-class", type=int, default=1)
    parser.add_argument("--days", type=int, default=7)
    args = parser.parse_args()
    price_of = catalog_prices(load_catalog())
    prices = {t: price_of(t) or Decimal(0) for t, _ in AUDIT_CLASSES.values()}
    fleet = generate_audit_fleet(
        seed=args.seed, per_class=args.per_class, hours=args.days * 24, prices=prices
    )
    args.dir.mkdir(parents=True, exist_ok=True)
    write_traces(args.dir, fleet)
    print(f"wrote {len(fleet)} traces to {args.dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
