"""One bounded way to read an input file, used by every loader.

Promise: :func:`read_bytes` returns the whole content of a *regular* file no larger
than ``limit`` bytes, or raises :class:`~gpuplan.core.errors.DataError` with one
readable line. FIFOs, sockets and devices (``/dev/zero``, ``/dev/stdin`` on a
terminal) are refused without reading a byte, and the size limit is checked on the
open file (``fstat``) *before* reading, then enforced again while reading (a file that
grows after the check cannot push more than ``limit + 1`` bytes into memory).

The file is opened with ``O_NONBLOCK`` so that opening a FIFO with no writer returns at
once instead of hanging; the regular-file check then refuses it.
"""

from __future__ import annotations

import errno
import os
import stat

from gpuplan.core.errors import DataError

KIB = 1024
MIB = 1024 * KIB
POLICY_LIMIT = 256 * KIB
"""A real policy is a few KiB. Refusing a larger file by its size costs nothing, while a
50,000-region list took seconds to parse before the policy reader's value cap refused it."""
JOB_FILE_LIMIT = 1 * MIB
CATALOG_LIMIT = 64 * MIB
TRACE_LIMIT = 64 * MIB
IMPORT_LIMIT = 256 * MIB
_CHUNK = 1 * MIB
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _size_text(size: int) -> str:
    return f"{size / MIB:.1f} MiB" if size >= MIB else f"{size} bytes"


def read_bytes(path: str | os.PathLike[str], *, limit: int, what: str = "file") -> bytes:
    """The bytes of regular file ``path`` (at most ``limit``); one-line DataError otherwise."""
    shown = str(path)
    try:
        fd = os.open(path, _FLAGS | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise DataError(shown, "file not found") from None
    except OSError as exc:
        raise DataError(shown, _os_reason(exc)) from None
    except ValueError:
        raise DataError(shown.replace("\x00", "\\0"), "file name contains a NUL byte") from None
    try:
        info = os.fstat(fd)
        kind = _kind(info.st_mode)
        if kind is not None:
            raise DataError(shown, f"is {kind}, not a regular {what}; refused")
        if info.st_size > limit:
            raise DataError(
                shown,
                f"too large for a {what} ({_size_text(info.st_size)}; "
                f"the limit is {_size_text(limit)})",
            )
        return _read_at_most(fd, limit, shown, what)
    except OSError as exc:
        raise DataError(shown, _os_reason(exc)) from None
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike[str], *, limit: int, what: str = "file") -> str:
    """:func:`read_bytes` decoded as UTF-8 (a BOM is dropped); binary data is refused."""
    data = read_bytes(path, limit=limit, what=what)
    if b"\x00" in data:
        raise DataError(str(path), f"binary data, not a text {what}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(str(path), f"not UTF-8 text (bad byte at offset {exc.start})") from None


def is_regular_file(path: str | os.PathLike[str]) -> bool:
    """True for an existing regular file (after symlinks); never raises."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _read_at_most(fd: int, limit: int, shown: str, what: str) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise DataError(shown, f"too large for a {what} (the limit is {_size_text(limit)})")


MAX_YAML_DEPTH = 32
"""Nesting an input file may have (PyYAML's parser slows down with depth: 5,000 levels
took seconds before it failed)."""


def load_yaml_tree(text: str, shown: str, *, what: str = "file") -> object:
    """``text`` as plain YAML data (``yaml.safe_load``), refusing anchors and aliases.

    An input file has no use for ``&anchor``/``*alias``, and they are how a 1 KiB file
    becomes a billion-element structure ("billion laughs"): refused with one line before
    anything is built; so is nesting deeper than :data:`MAX_YAML_DEPTH`. ``yaml.YAMLError``
    passes through for the caller to word.
    """
    import yaml

    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 1 if event.start_mark is not None else None
        where = f" (line {line})" if line else ""
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise DataError(shown, f"YAML anchors and aliases are not allowed in a {what}{where}")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise DataError(shown, f"nested deeper than {MAX_YAML_DEPTH} levels{where}")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return yaml.safe_load(text)


def _os_reason(exc: OSError) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.EISDIR:
        return "is a directory, not a file"
    if exc.errno == errno.ENAMETOOLONG:
        return "file name too long"
    if exc.errno in (errno.ENOTDIR, errno.ELOOP):
        return "not a readable file path"
    return f"cannot read: {exc.strerror or exc}"


__all__ = [
    "CATALOG_LIMIT",
    "IMPORT_LIMIT",
    "JOB_FILE_LIMIT",
    "POLICY_LIMIT",
    "TRACE_LIMIT",
    "is_regular_file",
    "load_yaml_tree",
    "read_bytes",
    "read_text",
]
