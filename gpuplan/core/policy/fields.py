"""Value types of policy files: durations, percentages, money, tag and label names.

Each type validates one YAML value and says in plain words what was expected. YAML's
own types are honoured strictly: ``true`` is not a number and ``"5"`` is not a
percentage, so a typo never turns into a silently different policy.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, PlainSerializer, WithJsonSchema

TAG_PATTERN = r"^[a-z][a-z0-9_-]{0,62}$"
"""Tag and label keys valid on every managed cloud alike (GCP is the strictest)."""
TAG_VALUE_PATTERN = r"^[a-z0-9_-]{0,63}$"
DURATION_PATTERN = r"^\s*(?:(\d+)\s*h)?\s*(?:(\d+)\s*m(?:in)?)?\s*$"
MAX_MINUTES = 366 * 24 * 60
NAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,62}$"
MAX_USD = Decimal(10**9)
"""No policy amount is above a billion dollars: a larger one is a typo."""
MAX_COUNT = 100_000
ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,127}$"

_DURATION = re.compile(DURATION_PATTERN)
_UNION_TAG = re.compile(r"^<[a-z]+>$")


def union_tag(name: str) -> str:
    """The tag of one form of a value that may take several (``all`` or a list).

    pydantic puts the tag in an error's location; the loader drops such parts
    (:func:`is_union_tag`) so that the location is the key path in the file.
    """
    return f"<{name}>"


def is_union_tag(part: object) -> bool:
    return isinstance(part, str) and bool(_UNION_TAG.match(part))


def describe(value: object) -> str:
    """How a YAML value reads in an error: ``150``, ``'abc'``, ``a list``."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, int) and abs(value) >= 10**18:
        return f"a {len(str(abs(value))) if abs(value) < 10**4000 else 'many'}-digit number"
    if isinstance(value, int | float | Decimal):
        return str(value)
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)


def parse_minutes(value: Any) -> int:
    """Whole minutes from ``90``, ``"90m"``, ``"2h"`` or ``"1h30m"``."""
    if isinstance(value, int) and not isinstance(value, bool):
        minutes = value
    elif (
        isinstance(value, str)
        and len(value) <= 40
        and (match := _DURATION.match(value))
        and any(match.groups())
    ):
        hours, mins = match.groups()
        minutes = int(hours or 0) * 60 + int(mins or 0)
    else:
        raise ValueError(
            f"expected a duration in minutes such as 60, '90m' or '2h', got {describe(value)}"
        )
    if minutes < 0:
        raise ValueError(f"must not be negative, got {describe(value)}")
    if minutes > MAX_MINUTES:
        raise ValueError(
            f"must be at most {MAX_MINUTES} minutes (366 days), got {describe(minutes)}"
        )
    return minutes


def _number(value: Any) -> Any:
    if not _is_number(value):
        raise ValueError(f"expected a number, got {describe(value)}")
    if isinstance(value, int) and abs(value) > 10**15:
        raise ValueError(f"expected a number of sensible size, got {describe(value)}")
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"expected a finite number, got {describe(value)}")
    return value


def between(low: float, high: float) -> AfterValidator:
    """A closed range check whose message names both ends."""

    def check(value: float) -> float:
        if not low <= value <= high:
            raise ValueError(f"must be between {low:g} and {high:g}, got {value:g}")
        return value

    return AfterValidator(check)


def _money(value: Any) -> Decimal:
    if not _is_number(value):
        raise ValueError(f"expected an amount in USD (a number), got {describe(value)}")
    try:
        amount = Decimal(str(value))
    except InvalidOperation:  # pragma: no cover - every number has a decimal form
        raise ValueError(f"expected an amount in USD, got {describe(value)}") from None
    if not amount.is_finite():
        raise ValueError(f"expected a finite amount in USD, got {describe(value)}")
    if amount <= 0:
        raise ValueError(f"must be more than 0 USD, got {describe(value)}")
    if amount > MAX_USD:
        raise ValueError(f"must be at most {MAX_USD:,} USD, got {describe(value)}")
    return amount


def _plain_number(amount: Decimal) -> int | float:
    """Money in JSON and YAML output: a number people can read, not a quoted string."""
    return int(amount) if amount == amount.to_integral_value() else float(amount)


def _text(pattern: str, what: str) -> BeforeValidator:
    compiled = re.compile(pattern)

    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise ValueError(f"expected {what}, got {describe(value)}")
        if not compiled.match(value):
            raise ValueError(f"{value!r} is not {what}")
        return value

    return BeforeValidator(check)


def text_check(pattern: str, what: str) -> BeforeValidator:
    """Checks a string matches ``pattern``, else says "expected <what>" (a cloud's section
    declares its ids this way: account, folder, management group)."""
    return _text(pattern, what)


def selection_kind(value: Any, listed: str) -> str | None:
    """Which form of an ``all`` / list / mapping choice a YAML value is (None: neither),
    as the tag of a discriminated union."""
    if value == "all":
        return union_tag("all")
    if isinstance(value, list):
        return union_tag(listed)
    if isinstance(value, dict | BaseModel):
        return union_tag("mapping")
    return None


def _positive_int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"expected a whole number, got {describe(value)}")
    if value < 1:
        raise ValueError(f"must be at least 1, got {describe(value)}")
    if value > MAX_COUNT:
        raise ValueError(f"must be at most {MAX_COUNT:,}, got {describe(value)}")
    return value


Minutes = Annotated[
    int,
    BeforeValidator(parse_minutes),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 0, "maximum": MAX_MINUTES},
                {"type": "string", "pattern": DURATION_PATTERN},
            ]
        }
    ),
]
"""Minutes: a whole number, or a duration such as ``90m``, ``2h``, ``1h30m``."""

Percent = Annotated[
    float,
    BeforeValidator(_number),
    between(0, 100),
    WithJsonSchema({"type": "number", "minimum": 0, "maximum": 100}),
]
"""A percentage from 0 to 100."""

AlertPercent = Annotated[
    float,
    BeforeValidator(_number),
    between(1, 1000),
    WithJsonSchema({"type": "number", "minimum": 1, "maximum": 1000}),
]
"""A share of the monthly budget in percent; above 100 warns of an overrun."""

Usd = Annotated[
    Decimal,
    BeforeValidator(_money),
    PlainSerializer(_plain_number, when_used="json"),
    WithJsonSchema({"type": "number", "exclusiveMinimum": 0}),
]
"""An amount in US dollars, more than zero."""

PositiveInt = Annotated[
    int, BeforeValidator(_positive_int), WithJsonSchema({"type": "integer", "minimum": 1})
]

TagName = Annotated[
    str,
    _text(
        TAG_PATTERN,
        "a tag or label name valid on every cloud "
        "(lowercase letter first, then lowercase letters, digits, '-' or '_', at most 63)",
    ),
    WithJsonSchema({"type": "string", "pattern": TAG_PATTERN}),
]
TagValue = Annotated[
    str,
    _text(
        TAG_VALUE_PATTERN,
        "a tag or label value valid on every cloud "
        "(lowercase letters, digits, '-' or '_', at most 63)",
    ),
    WithJsonSchema({"type": "string", "pattern": TAG_VALUE_PATTERN}),
]
PolicyName = Annotated[
    str,
    _text(NAME_PATTERN, "a policy name (lowercase letters, digits, '-' or '_', at most 63)"),
    WithJsonSchema({"type": "string", "pattern": NAME_PATTERN}),
]
Identifier = Annotated[
    str,
    _text(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$", "a cloud region, zone or project id"),
    WithJsonSchema({"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"}),
]


def _url(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected an http:// or https:// URL, got {describe(value)}")
    # Split and judged by ``policy check`` (:func:`gpuplan.core.policy.secrets.url_problems`)
    # with the parser that fetches it: a model has no URL parser of its own to disagree.
    return value


def _env_name(value: Any) -> str:
    if not isinstance(value, str) or not re.match(ENV_NAME_PATTERN, value):
        raise ValueError(
            f"expected an environment variable name (letters, digits, '_'), got {describe(value)}"
        )
    return value


HttpUrl = Annotated[
    str,
    BeforeValidator(_url),
    WithJsonSchema({"type": "string", "pattern": r"^https?://"}),
]
"""An http(s) URL: a string here; ``policy check`` splits and judges it (host, port
1-65535, where it points) with the parser that fetches it; shown redacted."""
WebhookUrl = Annotated[
    str,
    BeforeValidator(_url),
    WithJsonSchema({"type": "string", "pattern": r"^(https?://|\$\{[A-Za-z_][A-Za-z0-9_]*\})"}),
]
"""A URL; in files it may be written ``${ENV_VAR}``, expanded when the file is loaded."""
EnvName = Annotated[
    str,
    BeforeValidator(_env_name),
    WithJsonSchema({"type": "string", "pattern": ENV_NAME_PATTERN}),
]
"""The name of an environment variable a policy may expand with ``${NAME}``."""
