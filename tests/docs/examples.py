"""The shell examples of the documentation, read from the files themselves.

Every line of a ```bash block is a command, except comment-only lines (they describe the
next command) and blank ones; a line ending in ``\\`` continues on the next. A command
keeps its text as written (the key its claim is filed under, ``claims.py``) and the
comments around it (what the prose claims about it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = ("README.md", "docs/getting-started.md")
"""The files whose examples are tests: a reader runs these first."""


@dataclass(frozen=True)
class Command:
    doc: str
    """The file, relative to the repository root."""
    line: int
    """1-based line of the command's first line."""
    block: int
    """1-based index of its ```bash block in the file."""
    text: str
    """The command as written: continuation lines joined, the trailing comment off."""
    source: str
    """Exactly the lines of the file, for the shell."""
    note: str
    """The comments before it in the block and after it on its line."""

    @property
    def id(self) -> str:
        return f"{self.doc}:{self.line}: {self.text}"


_COMMENT = re.compile(r"\s+#\s(.*)$")


def _split_comment(line: str) -> tuple[str, str]:
    """(command, trailing comment); the examples put no `` # `` inside quotes."""
    found = _COMMENT.search(line)
    if found is None:
        return line.rstrip(), ""
    return line[: found.start()].rstrip(), found.group(1).strip()


def commands(doc: str) -> list[Command]:
    """The commands of every ```bash block of ``doc``, in order."""
    found: list[Command] = []
    block = 0
    inside = False
    lines = (REPO / doc).read_text(encoding="utf-8").splitlines()
    index = 0
    note: list[str] = []
    while index < len(lines):
        line = lines[index]
        index += 1
        if not inside:
            if line.strip() == "```bash":
                inside, block, note = True, block + 1, []
            continue
        if line.strip() == "```":
            inside = False
            continue
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            text = stripped.lstrip("#").strip()
            if line[0].isspace() and not note and found and found[-1].block == block:
                # An indented comment continues the previous line's trailing comment.
                found[-1] = replace(found[-1], note=f"{found[-1].note} {text}".strip())
            else:
                note.append(text)
            continue
        start = index
        source = [line]
        while source[-1].rstrip().endswith("\\") and index < len(lines):
            source.append(lines[index])
            index += 1
        parts = [_split_comment(part) for part in source]
        text = " ".join(part.rstrip("\\").strip() for part, _ in parts)
        comments = [comment for _, comment in parts if comment]
        found.append(
            Command(doc, start, block, " ".join(text.split()), "\n".join(source),
                    " ".join([*note, *comments]))
        )  # fmt: skip
        note = []
    return found
