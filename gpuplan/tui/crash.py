"""Where the TUI saves the traceback of a bug that stopped it: a private per-user folder.

Not the shared temp folder: a fixed name there can be created first by another local
user (or be a link to a file of yours), and every run would overwrite the last one. The
folder is the user's state directory (``~/.local/state/gpuplan/crashes`` on Linux, via
platformdirs), created ``0700``; each report gets a new name (``mkstemp``: created with
``O_CREAT | O_EXCL``, so never through a link), readable by its owner only.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

PREFIX = "tui-crash-"


def crash_dir() -> Path:
    """The user's private folder for crash reports (not created here)."""
    from platformdirs import user_state_dir

    return Path(user_state_dir("gpuplan")) / "crashes"


def private_folder(folder: Path) -> Path:
    """``folder`` created ``0700`` if missing; OSError unless it is a real folder of this
    user that no one else may write to (a link or a folder someone else made is refused)."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise OSError(f"{folder} is not a folder")
    getuid = getattr(os, "getuid", None)
    if getuid is not None and info.st_uid != getuid():
        raise OSError(f"{folder} belongs to another user")
    if info.st_mode & 0o077:
        os.chmod(folder, 0o700)
    return folder


def save_crash(text: str, folder: Path | None = None) -> Path:
    """Write ``text`` to a new private file in ``folder`` (default :func:`crash_dir`)."""
    where = private_folder(folder or crash_dir())
    handle, name = tempfile.mkstemp(prefix=PREFIX, suffix=".log", dir=where, text=True)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    return Path(name)
