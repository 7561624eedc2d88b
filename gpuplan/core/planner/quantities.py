"""Parsers for the quantities people type: ``7B``, ``2T``, ``36h``, ``14d``, ``8-512``.

Every parser raises :class:`InputError` with one readable line naming the flag, so
the CLI can print it and exit 2. Pure: strings in, numbers out.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from gpuplan.core.errors import InputError

_SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}
_NUMBER = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([kmbgtp]?)\s*$", re.IGNORECASE)
_DURATION = {"m": 1 / 60, "min": 1 / 60, "h": 1.0, "d": 24.0, "w": 168.0}

LIMITS: dict[str, float] = {
    "--params": 1e15,
    "--active-params": 1e15,
    "--tokens": 1e18,
    "--samples": 1e18,
    "--flops-per-sample": 1e24,
    "--throughput": 1e12,
    "--seq-len": 1e9,
    "--layers": 1e6,
    "--hidden": 1e8,
    "--heads": 1e7,
    "--vocab": 1e9,
    "--experts": 1e6,
    "--top-k": 1e6,
    "--micro-batch": 1e9,
    "--global-batch": 1e12,
    "--gpus": 1e7,
}
"""Largest value accepted per flag: far above any real run (1 quadrillion parameters,
10 million GPUs), far below what overflows the arithmetic downstream."""
MINIMUMS: dict[str, float] = {
    "--params": 1e6,
    "--active-params": 1e6,
    "--tokens": 1e6,
}
"""Smallest value accepted per flag: below it the planner would rank a toy job (a model of
half a parameter, ten tokens) as if it were a training run, at "0.0 h, $0.00"."""
DEFAULT_LIMIT = 1e18
MAX_YEARS = 100
MAX_HOURS = MAX_YEARS * 365 * 24.0
"""Durations over a century are refused (every duration flag, job files, the TUI form)."""


def ascii_number(text: str, flag: str) -> str:
    """``text`` when every character is ASCII; a number written with other digits
    (a superscript two, an Arabic-Indic three, a full-width five, which Python's ``int``
    and ``float`` would accept) is InputError."""
    if not text.isascii():
        raise InputError(f"{flag}: numbers are written with ASCII digits 0-9, got {text!r}")
    return text


def check_finite(value: float, flag: str, *, maximum: float | None = None) -> float:
    """``value`` if finite and at most ``maximum`` (default: the flag's limit); else InputError.

    Pure and reusable: the CLI, job files, the TUI form and policy files all refuse
    ``nan``, ``inf``, ``1e308`` and ``10**400`` with the same one line.
    """
    limit = LIMITS.get(flag, DEFAULT_LIMIT) if maximum is None else maximum
    try:
        number = float(value)
    except (OverflowError, ValueError):
        raise InputError(f"{flag}: expected a finite number, got {value!r}") from None
    if not math.isfinite(number):
        raise InputError(f"{flag}: expected a finite number, got {value!r}")
    if abs(number) > limit:
        raise InputError(f"{flag}: {_short(value)} is absurdly large (at most {limit:g})")
    return number


def _short(value: object) -> str:
    text = str(value)
    return text if len(text) <= 24 else f"{text[:12]}...({len(text)} characters)"


def parse_amount(text: str, flag: str, *, allow_zero: bool = False) -> float:
    """``7B`` -> 7e9, ``2T`` -> 2e12, ``1.5e9`` -> 1.5e9; positive, finite, within limits."""
    if text.strip().startswith("-"):
        raise InputError(f"{flag}: expected a positive number, got {text!r}")
    if text.strip().lower().lstrip("+") in ("inf", "infinity", "nan"):
        raise InputError(f"{flag}: expected a finite number, got {text!r}")
    match = _NUMBER.match(text.replace("_", "").replace(",", ""))
    if not match:
        raise InputError(
            f"{flag}: expected a number such as 7e9 or 7B (suffixes K, M, B, T), got {text!r}"
        )
    try:
        value = float(match.group(1)) * _SUFFIX[match.group(2).lower()]
    except OverflowError:
        value = math.inf
    if value == 0 and re.search(r"[1-9]", match.group(1).lower().split("e")[0]):
        raise InputError(f"{flag}: {_short(text.strip())} is too small (it rounds to zero)")
    if not math.isfinite(value):
        raise InputError(f"{flag}: expected a finite number, got {_short(text)!r}")
    check_finite(value, flag)
    if value < 0 or (value == 0 and not allow_zero):
        raise InputError(f"{flag}: expected a positive number, got {text!r}")
    if value < MINIMUMS.get(flag, 0):
        raise InputError(
            f"{flag}: {text.strip()} is implausibly small for training (expected "
            f"{_suffixed(MINIMUMS[flag])} to {_suffixed(LIMITS.get(flag, DEFAULT_LIMIT))}, "
            "e.g. 7B)"
        )
    return value


def _suffixed(value: float) -> str:
    """``1e6`` -> ``1M``, ``1e15`` -> ``1000T``: the way the flags are written."""
    for suffix, size in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if value >= size:
            return f"{value / size:g}{suffix}"
    return f"{value:g}"


def tokens_per_param_notice(tokens: float, params: float) -> str | None:
    """A notice when there are fewer training tokens than parameters: no pre-training run
    is that short (they use ~20 per parameter, e.g. --params 7B --tokens 140B), while a
    fine-tune may be, so it is said rather than refused (the MFU model is fitted to
    pre-training runs). Absurdly few tokens are refused by :data:`MINIMUMS`."""
    if tokens >= params:
        return None
    return (
        f"--tokens {_suffixed(tokens)} is fewer than --params {_suffixed(params)}: a "
        "fine-tune, not a pre-training run (those use ~20 tokens per parameter); the "
        "throughput model is fitted to pre-training"
    )


def parse_fraction(text: str, flag: str) -> float:
    """A fraction in (0, 1]: ``0.4``; ``40`` or ``40%`` are refused with a hint."""
    raw = ascii_number(text, flag).strip()
    if raw.endswith("%"):
        raise InputError(f"{flag}: give a fraction such as 0.4, not a percentage ({text!r})")
    try:
        value = float(raw)
    except ValueError:
        raise InputError(f"{flag}: expected a fraction such as 0.4, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"{flag}: expected a fraction in (0, 1], got {text!r}")
    if value > 1:
        raise InputError(
            f"{flag}: expected a fraction in (0, 1] such as 0.4, got {text!r} "
            f"(did you mean {value / 100:g}?)"
        )
    return value


DURATION_UNITS = "m (minutes), h (hours), d (days), w (weeks)"
"""The units every duration flag takes, for help texts and messages."""
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(min|[mhdw])")
_DURATION_WHOLE = re.compile(r"^(?:[0-9]+(?:\.[0-9]+)?(?:min|[mhdw]))+$")


def parse_duration(text: str, flag: str, *, max_hours: float = MAX_HOURS) -> float:
    """Hours from ``36h``, ``14d``, ``2w``, ``90m``, ``1h30m``: the one duration grammar of
    every flag (``--deadline``, ``--checkpoint-every``, ``--max-age``, ``snooze --for``).

    A unit is required: a bare ``14`` is refused with a hint, never read as hours in one
    place and days in another. ASCII digits only; positive; at most ``max_hours``.
    """
    raw = text.strip().lower().replace(" ", "")
    if raw.isascii() and raw.replace(".", "", 1).isdigit():
        raise InputError(
            f"{flag}: {_short(text)!r} has no unit; add one: {DURATION_UNITS}, "
            f"e.g. {raw}h or {raw}d"
        )
    if not raw.isascii() or len(raw) > 40 or not _DURATION_WHOLE.match(raw):
        raise InputError(
            f"{flag}: expected a duration such as 36h, 14d or 1h30m ({DURATION_UNITS}), "
            f"got {_short(text)!r}"
        )
    hours = sum(float(n) * _DURATION[u] for n, u in _DURATION_PART.findall(raw))
    if hours <= 0:
        raise InputError(f"{flag}: expected a positive duration, got {text!r}")
    if not math.isfinite(hours) or hours > max_hours:
        limit = f"{max_hours / 24:g} days" if max_hours < MAX_HOURS else f"{MAX_YEARS} years"
        raise InputError(f"{flag}: {_short(text)} is too long (at most {limit})")
    return hours


def parse_duration_hours(text: str, flag: str) -> float:
    """:func:`parse_duration` (kept for its callers)."""
    return parse_duration(text, flag)


def parse_gpu_counts(text: str, flag: str = "--gpus") -> tuple[float, ...]:
    """``64`` -> (64,), ``8,16,64`` -> (8, 16, 64), ``8-512`` -> powers of two in it.

    Counts below 1 (``0.5``) select fractional instance sizes.
    """
    counts: list[float] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if "-" in part.lstrip("-") and not part.startswith("-"):
            low_text, high_text = part.split("-", 1)
            low, high = _count(low_text, flag), _count(high_text, flag)
            if high < low:
                raise InputError(f"{flag}: range {part!r} runs backwards")
            counts.extend(_powers_of_two(low, high, part, flag))
        else:
            counts.append(_count(part, flag))
    if not counts:
        raise InputError(f"{flag}: expected a GPU count such as 64, 8,16,64 or 8-512")
    return tuple(sorted(set(counts)))


_COUNT = re.compile(r"[0-9]+(?:\.[0-9]+)?")
"""A GPU count: ASCII digits, a fraction for a partial GPU (``0.5``); no ``1_000``, no
``1e3``, no sign, none of the other digits ``float`` would take."""


def _count(text: str, flag: str) -> float:
    raw = ascii_number(text, flag).strip()
    if raw.startswith("-") and _COUNT.fullmatch(raw[1:]):
        raise InputError(f"{flag}: GPU counts must be positive and finite, got {text!r}")
    if not _COUNT.fullmatch(raw):
        raise InputError(
            f"{flag}: expected a GPU count written in digits such as 64 or 0.5, got {text!r}"
        )
    value = float(raw)
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"{flag}: GPU counts must be positive and finite, got {text!r}")
    check_finite(value, flag, maximum=LIMITS.get("--gpus", DEFAULT_LIMIT))
    if value >= 1 and value != int(value):
        raise InputError(f"{flag}: whole GPUs only above 1, got {text!r}")
    return value


def _powers_of_two(low: float, high: float, part: str, flag: str) -> list[float]:
    out: list[float] = []
    power = 1
    while power <= high:
        if power >= low:
            out.append(float(power))
        power *= 2
    if not out:
        raise InputError(f"{flag}: range {part!r} holds no power of two")
    return out


_MONEY = re.compile(r"^\s*\$?\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([kmbt]?)\s*$", re.IGNORECASE)
_MONEY_SCALE = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}
MAX_USD = Decimal(10**12)
"""A trillion dollars: above any budget, below what overflows the arithmetic."""
MIN_USD = Decimal("0.01")
"""A cent: a smaller amount above zero (``1e-400``) is a typo, not a budget or a price."""


def parse_usd(text: object, flag: str) -> Decimal:
    """An amount of USD in the one grammar of every amount: ``5000``, ``$5,000``, ``50K``,
    ``5M``, ``1.5B``; from 0 to a trillion, exact (Decimal, no float on the way)."""
    raw = str(text)
    match = _MONEY.match(raw.replace("_", "").replace(",", "")) if raw.isascii() else None
    if match is None:
        raise InputError(
            f"{flag}: expected an amount in USD such as 5000, 50K or 5M, got {_short(raw)!r}"
        )
    try:
        value = Decimal(match.group(1)) * _MONEY_SCALE[match.group(2).lower()]
    except ArithmeticError:  # decimal.Overflow on an exponent past the context's
        value = Decimal("inf")
    if not value.is_finite() or value > MAX_USD:
        raise InputError(f"{flag}: {_short(raw)} is absurdly large (at most $1,000,000,000,000)")
    if 0 < value < MIN_USD:
        raise InputError(f"{flag}: {_short(raw)} is less than a cent (0 or at least 0.01)")
    return value
