"""One run session for every command that acts: the run lock, then the ledger.

``gpuplan stop-idle`` and the TUI's stop both open a session the same way. With a
ledger file: an exclusive lock file beside it (a second concurrent run on this host
waits up to ``lock_wait`` seconds, then gives up with :class:`LockBusy`, nothing done),
then the ledger itself; shards sharing a file take turns. With a PostgreSQL ledger:
the ledger, then a database advisory lock named by the policy and the shard, held by
the ledger's connection, so shards of one policy run in parallel while two runs of the
same shard do not (the second waits, then gives up the same way); the lock dies with
the connection, so a killed run leaves none behind. The session's shard and lock name
are recorded with the run. A run that cannot open its ledger acts on nothing: the
error leaves before any adapter is asked to act.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from gpuplan.core.errors import GpuplanError
from gpuplan.core.lifecycle.shard import Shard
from gpuplan.ledger import Ledger, LedgerError, ledger_location
from gpuplan.ledger.files import private_file
from gpuplan.ledger.sqlite_file import check_ledger_file


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


def lock_name(policy: str, shard: Shard | None) -> str:
    """The run lock's name: one per policy and shard (``all`` for an unsharded run)."""
    return f"stop-idle policy={policy} shard={shard.label if shard else 'all'}"


@contextmanager
def database_lock(ledger: Ledger, name: str, wait_seconds: float) -> Iterator[None]:
    """The ledger's advisory lock ``name``; waits up to ``wait_seconds``, then LockBusy."""
    deadline = time.monotonic() + wait_seconds
    while not ledger.try_lock(name):
        if time.monotonic() >= deadline:
            raise LockBusy(
                f"another stop-idle run holds the lock {name!r} in {ledger.label}; nothing was done"
            )
        time.sleep(0.2)
    try:
        yield
    finally:
        ledger.unlock(name)


@contextmanager
def run_session(
    db: str | os.PathLike[str] | None,
    lock_wait: float,
    environ: Mapping[str, str] | None = None,
    *,
    policy: str = "",
    shard: Shard | None = None,
) -> Iterator[Ledger]:
    """The lock (beside a ledger file, or in the PostgreSQL ledger), and the ledger;
    both released on the way out."""
    where = ledger_location(db, environ)
    name = lock_name(policy, shard)
    if isinstance(where, str):  # PostgreSQL
        with Ledger(where, environ=environ) as ledger, database_lock(ledger, name, lock_wait):
            ledger.shard, ledger.lock_name = (shard.label if shard else ""), name
            yield ledger
        return
    path = where
    try:  # a FIFO or device ledger is refused before a lock is made beside it
        if path.exists() or path.is_symlink():  # a new one is made whole by the ledger
            check_ledger_file(path)  # a file that is not a ledger is refused untouched
            private_file(path)
    except OSError as exc:
        raise LedgerError(f"{path}: cannot open the ledger: {exc.strerror or exc}") from None
    with run_lock(path.with_name(path.name + ".lock"), lock_wait), Ledger(path) as ledger:
        ledger.shard, ledger.lock_name = (shard.label if shard else ""), name
        yield ledger
