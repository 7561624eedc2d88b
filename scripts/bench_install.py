"""Benchmark (not a test) of what ``pip install`` brings; writes benchmarks/results/install.md.

For each install (``pip install .``, the cloud extras one by one, ``.[all]``) it makes a
fresh venv in a temporary folder, installs this checkout into it (not editable, as a user
would) and records the size of ``site-packages`` (``du``, MiB), the number of
distributions (pip and setuptools, which every venv has, are counted apart) and the
largest ones. ``--ref COMMIT`` measures ``pip install .`` of an older commit (its
``git archive``) too, for a before/after row.

Run: ``python scripts/bench_install.py [--ref 41a5fe1]`` from the repository root (a few
minutes: each install resolves and unpacks its wheels).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "install.md"
SPECS = [".", ".[aws]", ".[gcp]", ".[azure]", ".[tui]", ".[all]"]
ALWAYS = {"pip", "setuptools"}


def _site(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def _mib(path: Path) -> float:
    done = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=True)
    return int(done.stdout.split()[0]) / 1024


def measure(source: Path, spec: str, work: Path) -> tuple[float, int, list[tuple[float, str]]]:
    """(MiB, distributions besides pip/setuptools, the five largest top-level folders)."""
    venv = work / f"venv{abs(hash((str(source), spec)))}"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", spec.replace(".", str(source), 1)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    site = _site(venv)
    dists = [
        p.name.split("-")[0].lower() for p in site.glob("*.dist-info") if p.name.endswith("info")
    ]
    counted = [d for d in dists if d not in ALWAYS]
    folders = [
        (_mib(p), p.name) for p in site.iterdir() if p.is_dir() and "dist-info" not in p.name
    ]
    return _mib(site), len(counted), sorted(folders, reverse=True)[:5]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", help="also measure `pip install .` of this commit")
    args = parser.parse_args()
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="gpuplan-install-") as tmp:
        work = Path(tmp)
        installs: list[tuple[str, Path, str]] = []
        if args.ref:
            old = work / "ref"
            old.mkdir()
            archive = subprocess.run(
                ["git", "archive", args.ref], cwd=ROOT, capture_output=True, check=True
            )
            subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
            installs.append((f"`pip install .` at {args.ref}", old, "."))
        installs += [(f"`pip install '{s}'`", ROOT, s) for s in SPECS]
        for label, source, spec in installs:
            mib, count, largest = measure(source, spec, work)
            biggest = ", ".join(f"{name} {size:.0f}" for size, name in largest)
            rows.append(f"| {label} | {mib:.0f} | {count} | {biggest} |")
            print(rows[-1], flush=True)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        "# Install size",
        "",
        f"Written by `scripts/bench_install.py` on {stamp}; Python "
        f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs. A fresh "
        "venv per row, the checkout installed as a wheel (not editable).",
        "",
        "| install | site-packages MiB | distributions (besides pip, setuptools) "
        "| largest folders (MiB) |",
        "|---|---:|---:|---|",
        *rows,
        "",
        "Every venv also holds pip and setuptools (about 24 MiB of the figures).",
        "",
    ]
    OUT.write_text("\n".join(lines))
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
