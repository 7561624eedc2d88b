"""Private files for what gpuplan keeps: ledger, lock and catalog files 0600, folders 0700.

The ledger holds instance ids, tags, costs and reasons; the lock file sits beside it.
Neither is anyone else's business on a shared host. A folder gpuplan creates is made
0700; an existing folder is left as its owner set it (it may be shared on purpose). A
file gpuplan creates is created 0600 (never world-readable, even for a moment); an
existing file that is readable by others is narrowed to 0600.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from gpuplan.core.errors import InputError

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: Path) -> None:
    """Create ``path`` (and missing parents) as 0700 folders; existing ones unchanged."""
    missing: list[Path] = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing.append(folder)
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(folder, DIR_MODE)  # mkdir's mode is masked by the umask


class NotARegularFile(InputError):
    """A ledger or lock path names a FIFO, a device or a folder (bad input, exit 2)."""


def private_file(path: Path) -> None:
    """Make sure ``path`` exists as a 0600 regular file (created so, or narrowed)."""
    private_dir(path.parent)
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags, FILE_MODE)
    except IsADirectoryError:
        raise NotARegularFile(f"{path}: is a directory, not a file gpuplan can keep") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFile(f"{path}: not a regular file (a FIFO or a device); refused")
        if info.st_mode & 0o077:
            os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
