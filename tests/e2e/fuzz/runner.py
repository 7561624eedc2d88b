"""Run ``gpuplan`` in-process with a time limit and judge what it did.

``run_cli`` calls :func:`gpuplan.cli.main.main` with stdout and stderr captured and a
SIGALRM deadline (a blocking ``open`` or ``read`` is interrupted too), so a hang is a
failed case instead of a stuck suite. :func:`problems_with` lists what is wrong with
one result: an exception that escaped ``main`` (a traceback), a hang, a stray exit
code, or the word ``Traceback`` in the output.
"""

from __future__ import annotations

import contextlib
import io
import signal
import traceback
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from gpuplan.cli.main import main

DEFAULT_LIMIT_S = 10


class Hang(BaseException):
    """Raised by the alarm: the command ran past its limit."""


@dataclass(frozen=True)
class Result:
    argv: tuple[str, ...]
    code: int | None
    out: str
    err: str
    escaped: str | None = None
    """The traceback of an exception that escaped ``main``."""
    hung: bool = False


@contextlib.contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    def ring(signum: int, frame: object) -> None:
        raise Hang()

    previous = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_cli(argv: Sequence[str], *, limit_s: int = DEFAULT_LIMIT_S) -> Result:
    """``gpuplan ARGV`` in this process; never raises for what the command does.

    A case that runs past ``limit_s`` is run once more with three times the limit
    before it counts as a hang: on a loaded CI machine a slow case is not a hang, while
    a real one (a blocking open, an endless read) blocks again.
    """
    first = _run_once(argv, limit_s)
    return _run_once(argv, 3 * limit_s) if first.hung else first


def _run_once(argv: Sequence[str], limit_s: int) -> Result:
    out, err = io.StringIO(), io.StringIO()
    code: int | None = None
    escaped: str | None = None
    hung = False
    try:
        with _deadline(limit_s), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(argv))
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    except Hang:
        hung = True
    except Exception:
        escaped = traceback.format_exc()
    return Result(tuple(argv), code, out.getvalue(), err.getvalue(), escaped, hung)


def problems_with(result: Result, allowed: Sequence[int] = (0, 1, 2)) -> list[str]:
    """What is wrong with ``result``: empty when it behaved."""
    found: list[str] = []
    if result.hung:
        found.append("hang (ran past its time limit)")
    if result.escaped:
        found.append("traceback:\n" + result.escaped[-1500:])
    if "Traceback (most recent call last)" in result.out + result.err:
        found.append("a traceback was printed:\n" + result.err[-1500:])
    if not result.hung and not result.escaped and result.code not in allowed:
        found.append(f"exit {result.code}, expected one of {list(allowed)}: {result.err[-300:]}")
    return found


def describe(result: Result) -> str:
    shown = [a if len(a) < 80 else a[:77] + "..." for a in result.argv]
    return "gpuplan " + " ".join(shown)
