"""Words for people: counts (``1 GPU``, ``2 GPUs``, never ``GPU(s)``) and untrusted text
made safe to show.

:func:`shown` is the one function every output path of the shells passes text through
(the CLI wraps stdout and stderr with it; tables escape each cell before measuring it).
It keeps newlines, because the writer cannot tell gpuplan's own line breaks (a table, a
list of problems) from one inside a value; so a value that came from input or a provider
is escaped where it is put into a line: :func:`one_line` (newline and tab too) for table
cells, and :func:`shown_line` for every error, notice, warning and progress line, each
composed as one line (``gpuplan: error: ...`` per problem, ``cli.output.say``):

- :func:`escape_control` writes control characters (C0 but newline and tab, DEL, C1)
  and the bidirectional overrides as visible escapes (``\\x1b``, ``\\u202e``), so a
  region, instance id, policy key or provider string cannot move the cursor, clear the
  screen or reorder a line;
- :func:`redact_secrets` replaces what looks like a secret with ``***``: the password of
  any ``scheme://user:PASSWORD@host`` URL, the value of ``password=``, ``token=``,
  ``secret=``, ``api_key=``, ``signature=`` ... keywords (libpq keyword DSNs, query
  strings), whatever the text around them.
"""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_ALL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/@'\"]*):[^\s'\"]*@")
_SECRET_KEY = (
    r"[\w.-]*(?:password|passwd|pwd|passphrase|token|secret|api[_-]?key|apikey|"
    r"signature|sig|credential|access[_-]?key)"
)
# The lookahead (the word run from here ends at "=", checked without backtracking) only
# skips starts that cannot match: same matches, about 6x faster on a 200 KB JSON answer.
_KEYWORD = re.compile(
    rf"(?i)\b(?=[\w.-]*+\s*=)({_SECRET_KEY})(\s*=\s*)('(?:[^'\\]|\\.)*'?|\"[^\"]*\"?|[^\s&;,'\"]+)"
)


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``1 GPU``, ``2 GPUs``, ``1,234 offers``; ``many`` for irregular plurals."""
    return f"{n:,} {noun if n == 1 else (many or noun + 's')}"


def counted(n: float, noun: str, many: str | None = None) -> str:
    """:func:`plural` for counts that may be fractional: ``1 GPU``, ``0.5 GPU``, ``8 GPUs``."""
    return f"{n:g} {noun if n <= 1 else (many or noun + 's')}"


def escape_control(text: str) -> str:
    """``text`` with every control character but newline and tab written as an escape."""
    return _CONTROL.sub(_escape_one, text)


def one_line(text: str) -> str:
    """``text`` as part of one line: every control character escaped, newline and tab
    included (``\\n``), so a value from input or a provider cannot start a line."""
    return _CONTROL_ALL.sub(_escape_one, text)


def shown_line(text: str) -> str:
    """:func:`shown` for a value inside one line: newlines escaped too."""
    return one_line(redact_secrets(text))


_NAMED = {"\n": "\\n", "\t": "\\t"}
"""Only :func:`one_line` meets these two; carriage returns stay ``\\x0d`` as before."""


def _escape_one(match: re.Match[str]) -> str:
    named = _NAMED.get(match.group())
    if named is not None:
        return named
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def redact_secrets(text: str) -> str:
    """``text`` with URL passwords and the values of secret-named keywords as ``***``."""
    if "@" in text:
        text = _URL_PASSWORD.sub(r"\1:***@", text)
    if "=" in text:
        text = _KEYWORD.sub(_keep_key, text)
    return text


def _keep_key(match: re.Match[str]) -> str:
    if match.group(3) == "***":
        return match.group()
    return f"{match.group(1)}{match.group(2)}***"


def shown(text: str) -> str:
    """Untrusted ``text`` as it may reach a terminal, a log or a file: secrets redacted,
    control characters escaped."""
    return escape_control(redact_secrets(text))
