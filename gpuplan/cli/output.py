"""Every byte the CLI prints passes :func:`gpuplan.core.wording.shown`.

:func:`guarded_output` replaces ``sys.stdout`` and ``sys.stderr`` for one run with
:class:`SafeStream`, so no message path (argparse's errors and usage, a handler's
table, a notice, an error from deep inside a loader) can print a secret or a raw
control character. Text is passed on line by line, so a secret split over two
``write`` calls of one line is still found; :meth:`SafeStream.flush` passes on a partial
line (a progress line). Known secret values (those written in the command line's
``--db``, and the values of secret environment variables) are scrubbed too, whatever
they look like.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator, Sequence
from typing import TextIO, cast

from gpuplan.core.wording import shown, shown_line

SECRET_ENV = ("PGPASSWORD", "GPUPLAN_WEBHOOK_URL", "SLACK_WEBHOOK_URL")
"""Environment variables whose values are secrets wherever they turn up, besides each
registered cloud's own (:func:`secret_env`)."""


def secret_env() -> tuple[str, ...]:
    """Every secret environment variable: the fixed ones and each registered cloud's (its
    credentials, and the key of its price API that ``catalog refresh`` reads)."""
    from gpuplan.core.clouds import facts_of, registered

    found = list(SECRET_ENV)
    for provider in registered():
        facts = facts_of(provider)
        found.extend(facts.secret_env)
        if facts.price_key_env:
            found.append(facts.price_key_env)
    return tuple(dict.fromkeys(found))


MIN_SECRET = 6
"""Shorter values are not scrubbed (``***`` for every ``a`` would hide the message)."""


class SafeStream(io.TextIOBase):
    """A text stream that passes redacted, escaped lines on to ``target``."""

    def __init__(self, target: TextIO, secrets: Sequence[str] = ()) -> None:
        super().__init__()
        self._target = target
        self._secrets = sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len)[::-1]
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        head, newline, tail = self._pending.rpartition("\n")
        if newline:
            self._pending = tail
            self._target.write(self._clean(head + newline))
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._target.write(self._clean(self._pending))
            self._pending = ""
        self._target.flush()

    def isatty(self) -> bool:
        return self._target.isatty()

    def fileno(self) -> int:
        return self._target.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]  # read-only here, as on TextIO
        return getattr(self._target, "encoding", None) or "utf-8"

    def writable(self) -> bool:
        return True

    def _clean(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        # A carriage return that starts a chunk redraws a progress line: kept; any other
        # is escaped with the rest of the control characters.
        lead = "\r" if text.startswith("\r") else ""
        return lead + shown(text[len(lead) :])


def known_secrets(words: Sequence[str]) -> list[str]:
    """Secret values named in the command line's ledger URLs and in the environment."""
    from gpuplan.core.urls import dsn_secrets, is_postgres_dsn

    found = [os.environ.get(name, "") for name in secret_env()]
    for word in (*words, os.environ.get("GPUPLAN_DB", "")):
        text = word.partition("=")[2] if word.startswith("--db=") else word
        if is_postgres_dsn(text):
            found.extend(dsn_secrets(text))
    return [s for s in found if s]


@contextlib.contextmanager
def guarded_output(words: Sequence[str]) -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` as :class:`SafeStream` while the block runs."""
    secrets = known_secrets(words)
    saved = sys.stdout, sys.stderr
    out, err = SafeStream(saved[0], secrets), SafeStream(saved[1], secrets)
    sys.stdout, sys.stderr = cast(TextIO, out), cast(TextIO, err)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
        for stream in (out, err):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()


def say(kind: str, text: str) -> None:
    """One line on stderr, ``gpuplan: KIND: text``: ``text`` is composed by gpuplan but
    carries values from input and providers (regions, instance ids, policy keys), so it
    passes :func:`~gpuplan.core.wording.shown_line`: a newline inside a value is written
    ``\\n`` and cannot start a forged ``gpuplan: notice:`` line of its own."""
    print(f"gpuplan: {kind}: {shown_line(text)}", file=sys.stderr)
