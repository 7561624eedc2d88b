"""Holiday files named by a policy's schedules (``holidays_file``), read into the policy.

A holiday file is text: one ISO date (``2026-12-25``) per line; blank lines and ``#``
comments are ignored. Its path is relative to the policy file's folder (an absolute path
is taken as it is). It is read through :mod:`gpuplan.loaders.safe_read` (a regular file,
at most 64 KiB, at most :data:`~gpuplan.core.policy.schedules.MAX_HOLIDAYS` dates); a
bad line is a problem naming the holiday file and its line, as for the policy itself.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from gpuplan.core.errors import DataError
from gpuplan.core.policy import KeyPath, Policy
from gpuplan.core.policy.schedules import MAX_HOLIDAYS
from gpuplan.loaders.safe_read import read_bytes

HOLIDAYS_LIMIT = 64 * 1024
_DATE_LIKE = re.compile(r"(?=.*[0-9])(?!.*[A-Za-z0-9]{11})[A-Za-z0-9 ,./-]{1,24}")
"""What a mistyped date looks like (``2026-13-45``, ``July 4``, ``25.12.2026``): short,
with a digit, no word of over 10 characters and nothing but letters, digits, spaces and
``,./-``. Only such a line is quoted back; any other is not shown, so a policy naming a
credentials file (``key = value`` lines, long tokens) cannot print it into a CI log."""


def with_holiday_files(
    policy: Policy, policy_path: str
) -> tuple[Policy, list[DataError], list[tuple[KeyPath, str]]]:
    """``policy`` with each schedule's ``holidays_file`` dates added to its ``holidays``;
    problems inside a holiday file (file, line), and problems at a policy key (a file
    that cannot be read)."""
    named = dict(policy.schedules.named)
    inside: list[DataError] = []
    at_key: list[tuple[KeyPath, str]] = []
    for name, schedule in policy.schedules.named.items():
        if schedule.holidays_file is None:
            continue
        where: KeyPath = ("schedules", "named", name, "holidays_file")
        path = Path(schedule.holidays_file)
        if not path.is_absolute():
            path = Path(policy_path).parent / path
        try:
            data = read_bytes(path, limit=HOLIDAYS_LIMIT, what="holiday file")
        except DataError as exc:
            at_key.append((where, f"holiday file {path}: {exc.message}"))
            continue
        days, problems = parse_holidays(data, str(path))
        inside.extend(problems)
        total = sorted({*schedule.holidays, *(day.isoformat() for day in days)})
        if len(total) > MAX_HOLIDAYS:
            at_key.append((where, f"more than {MAX_HOLIDAYS} holidays in all ({len(total)})"))
            continue
        named[name] = schedule.model_copy(update={"holidays": total})
    schedules = policy.schedules.model_copy(update={"named": named})
    return policy.model_copy(update={"schedules": schedules}), inside, at_key


def parse_holidays(data: bytes, shown: str) -> tuple[list[date], list[DataError]]:
    """The dates in a holiday file, and a problem per line that is not one."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return [], [DataError(shown, f"not UTF-8 text (bad byte at offset {exc.start})")]
    days: list[date] = []
    problems: list[DataError] = []
    for number, line in enumerate(text.splitlines(), start=1):
        word = line.split("#", 1)[0].strip()
        if not word:
            continue
        try:
            days.append(date.fromisoformat(word) if len(word) == 10 else _refuse())
        except ValueError:
            said = f"expected a date such as 2026-12-25, got {_quoted(word)}"
            problems.append(DataError(shown, said, line=number))
    return days, problems


def _quoted(word: str) -> str:
    if _DATE_LIKE.fullmatch(word):
        return repr(word)
    return f"a line of {len(word)} characters that is not a date (not shown)"


def _refuse() -> date:
    raise ValueError("not an ISO date")
