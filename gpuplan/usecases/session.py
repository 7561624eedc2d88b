"""One run session for every command that acts: the run lock, then the ledger.

``gpuplan stop-idle`` and the TUI's stop both open a session the same way: an
exclusive lock file beside the ledger (a second concurrent run on this host waits up to
``lock_wait`` seconds, then gives up with :class:`LockBusy`, nothing done), then the
ledger itself. A run that cannot open its ledger acts on nothing: the error leaves
before any adapter is asked to act.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from gpuplan.core.errors import GpuplanError
from gpuplan.ledger import Ledger, LedgerError, ledger_path
from gpuplan.ledger.files import private_file


class LockBusy(GpuplanError):
    """Another stop-idle run holds the lock."""


@contextmanager
def run_lock(path: Path, wait_seconds: float) -> Iterator[None]:
    """An exclusive lock file; waits up to ``wait_seconds``, then raises LockBusy."""
    try:
        private_file(path)  # 0600 in a 0700 folder gpuplan creates; FIFOs refused
        handle = open(path, "a+")  # noqa: SIM115 - closed by the with below
    except OSError as exc:
        raise LedgerError(f"{path}: cannot create the run lock: {exc.strerror}") from None
    with handle:
        deadline = time.monotonic() + wait_seconds
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockBusy(
                        f"another stop-idle run holds {path}; nothing was done"
                    ) from None
                time.sleep(0.2)
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()))
            handle.flush()
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextmanager
def run_session(
    db: str | os.PathLike[str] | None,
    lock_wait: float,
    environ: Mapping[str, str] | None = None,
) -> Iterator[Ledger]:
    """The lock (beside the ledger), then the ledger, both released on the way out."""
    path = ledger_path(db, environ)
    try:  # a FIFO or device ledger is refused before a lock is made beside it
        private_file(path)
    except OSError as exc:
        raise LedgerError(f"{path}: cannot open the ledger: {exc.strerror or exc}") from None
    with run_lock(path.with_name(path.name + ".lock"), lock_wait), Ledger(path) as ledger:
        yield ledger
