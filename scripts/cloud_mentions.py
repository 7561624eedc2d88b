"""Count, per built-in cloud, the gpuplan modules outside its own package that name it.

The architecture review's figure ("AWS is named by 19 files outside its package"): a
cloud is one registry entry, so what knows about it should live in its package
(``gpuplan/providers/<cloud>/``) and the one list of entries, not across the tree.

The rule, per ``gpuplan/**/*.py`` file outside ``gpuplan/providers/<cloud>/``:

- code only: comments and docstrings (a string that is a whole statement) are prose and
  do not count;
- an identifier names the cloud when one of its parts is the cloud's name: parts are
  split at ``_``, ``.`` and lower-to-upper case changes, compared case-insensitively
  (``aws_scopes``, ``AwsScope``, ``Provider.AWS``, ``providers.aws``, ``idle.metrics.gcp``);
- a string literal (f-strings included) names it when the cloud's name appears in it as
  a word (``"aws"``, ``"aws.csv"``, ``"scope.azure"``, ``"AWS instance store"``).

Allowed (not counted): the registry's list of entries (``ALLOWED`` below) and the
catalog's data files (``pricing/*.csv``, ``pricing/*.toml``: not Python, never scanned).

Run: ``python scripts/cloud_mentions.py`` (add ``--files`` to list the files);
tests/docs/test_cloud_mentions.py keeps the figures from growing.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLOUDS = ("aws", "gcp", "azure")
ALLOWED = frozenset({"gpuplan/usecases/clouds/entries.py"})
"""The registry's list of entries: the one place that names every built-in cloud."""

_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_OPENING = {tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, None}


def _parts(name: str) -> set[str]:
    return {p.lower() for p in _PARTS.findall(name)}


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def named_clouds(source: str) -> set[str]:
    """The built-in clouds ``source`` names in code (identifiers, non-docstring strings)."""
    found: set[str] = set()
    lines = io.StringIO(source).readline
    tokens = [
        t for t in tokenize.generate_tokens(lines) if t.type not in (tokenize.NL, tokenize.COMMENT)
    ]
    previous: int | None = None
    for i, token in enumerate(tokens):
        kind = token.type
        if kind == tokenize.NAME:
            found |= _parts(token.string) & set(CLOUDS)
        elif kind == tokenize.STRING:
            after = tokens[i + 1].type if i + 1 < len(tokens) else tokenize.ENDMARKER
            docstring = previous in _OPENING and after in (tokenize.NEWLINE, tokenize.ENDMARKER)
            if not docstring:
                found |= _words(token.string) & set(CLOUDS)
        previous = kind if kind in _OPENING else -1
    return found


def own_package(cloud: str) -> str:
    return f"gpuplan/providers/{cloud}/"


def mentions(root: Path = ROOT) -> dict[str, list[str]]:
    """Each built-in cloud -> the files outside its package and the allow-list naming it."""
    out: dict[str, list[str]] = {cloud: [] for cloud in CLOUDS}
    for path in sorted((root / "gpuplan").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel in ALLOWED:
            continue
        for cloud in sorted(named_clouds(path.read_text(encoding="utf-8"))):
            if not rel.startswith(own_package(cloud)):
                out[cloud].append(rel)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", action="store_true", help="list the files per cloud")
    args = parser.parse_args(argv)
    for cloud, files in mentions().items():
        print(f"{cloud}: {len(files)} files outside {own_package(cloud)}")
        if args.files:
            for f in files:
                print(f"  {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
