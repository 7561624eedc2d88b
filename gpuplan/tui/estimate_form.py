"""The Estimate form's rules: each numeric field parsed with the CLI's parsers, within
the CLI's limits, and every message in the form's words (``params``, not ``--params``).

Pure: the form's text in, the use case's arguments or per-field problems out. A field
that fails is named, so the screen can mark it and clear the old results.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from gpuplan.core.errors import InputError
from gpuplan.core.planner.quantities import (
    MAX_HOURS,
    parse_amount,
    parse_duration,
    parse_gpu_counts,
    parse_usd,
)

MAX_FIELD_CHARS = 40
"""Longer text is refused before parsing (``10**400`` typed out is 401 characters)."""
LABELS = {
    "params": "params",
    "tokens": "tokens",
    "gpus": "GPU count",
    "gpu": "GPU",
    "deadline": "deadline",
    "budget": "budget $",
    "pricing": "pricing",
    "policy": "policy",
    "precision": "precision",
    "objective": "rank by",
    "method": "method",
    "lora_rank": "LoRA rank",
}
FLAG_FIELDS = {
    "--params": "params",
    "--active-params": "params",
    "--tokens": "tokens",
    "--gpus": "gpus",
    "--gpu": "gpu",
    "--deadline": "deadline",
    "--budget": "budget",
    "--pricing": "pricing",
    "--policy": "policy",
    "--precision": "precision",
    "--objective": "objective",
    "--method": "method",
    "--lora-rank": "lora_rank",
}


@dataclass(frozen=True)
class FormResult:
    """The checked form: text for :class:`EstimateArgs`, or problems by field id."""

    values: dict[str, str]
    problems: dict[str, str]


def check_params(text: str) -> str:
    parse_amount(text, "--params")  # the CLI's grammar and limits (LIMITS)
    return text


def check_tokens(text: str) -> str:
    parse_amount(text, "--tokens")
    return text


def check_gpus(text: str) -> str:
    """The CLI's ``--gpus`` grammar: ASCII digits, lists and ranges (``1_000`` refused)."""
    parse_gpu_counts(text, "--gpus")
    return text


def check_deadline(text: str) -> str:
    """A duration with its unit: ``14`` alone is refused (hours? days?), not guessed; at
    most :data:`MAX_HOURS`, the CLI's limit."""
    if re.fullmatch(r"\s*[0-9]*\.?[0-9]+\s*", text):
        raise InputError(f"--deadline: give a unit: {text.strip()}h or {text.strip()}d (or w, m)")
    return f"{parse_duration(text, '--deadline', max_hours=MAX_HOURS)!r}h"


def check_budget(text: str) -> str:
    """USD in the CLI's one grammar of amounts (``20k``, ``1.5M``, ``$20,000``): zero or a
    cent up to a trillion (:func:`~gpuplan.core.planner.quantities.parse_usd`)."""
    return str(parse_usd(text.strip(), "--budget"))


def check_rank(text: str) -> str:
    """The adapter rank: a whole number (the planner checks its range and the method)."""
    value = parse_amount(text, "--lora-rank")
    if value != int(value):
        raise InputError(f"--lora-rank: expected a whole number, got {text!r}")
    return str(int(value))


CHECKS: Mapping[str, Callable[[str], str]] = {
    "params": check_params,
    "tokens": check_tokens,
    "gpus": check_gpus,
    "deadline": check_deadline,
    "budget": check_budget,
    "lora_rank": check_rank,
}
"""Every numeric field of the form and its rule."""


def check_form(form: Mapping[str, str]) -> FormResult:
    """Each field's text checked; blanks are left out (the use case's default)."""
    values: dict[str, str] = {}
    problems: dict[str, str] = {}
    for field_id, raw in form.items():
        text = raw.strip()
        if not text:
            continue
        check = CHECKS.get(field_id)
        if check is not None and len(text) > MAX_FIELD_CHARS:
            problems[field_id] = f"{LABELS.get(field_id, field_id)}: too long ({len(text)} chars)"
            continue
        try:
            values[field_id] = check(text) if check else text
        except InputError as exc:
            problems[field_id] = in_form_words(str(exc))[0]
    return FormResult(values, problems)


def in_form_words(message: str) -> tuple[str, str | None]:
    """A use-case message with flag names replaced by field labels, and the field it names."""
    named = None
    for flag in sorted(FLAG_FIELDS, key=len, reverse=True):
        if flag in message:
            field_id = FLAG_FIELDS[flag]
            named = named or field_id
            message = re.sub(rf"{re.escape(flag)}\b", LABELS[field_id], message)
    message = message.replace("(or --samples with --flops-per-sample)", "")
    message = re.sub(r"--([a-z][a-z-]*)", r"\1 (a CLI option; use gpuplan estimate)", message)
    return message.strip(), named


def resolve_policy(text: str, policies_dir: Path) -> str:
    """A policy path as typed, or a file name found in the policies folder (``--policies``).

    InputError (one line, in the form's words) for what no file system takes: a ``~user``
    that names no one (``~policies/team.yaml``), a name too long for the file system, a
    NUL byte; the text as typed when nothing matches (the loader then names it).
    """
    label = "--policy"  # in the form's words once through in_form_words
    if len(text) > MAX_PATH_CHARS:
        raise InputError(f"{label}: path too long ({len(text):,} characters)")
    if "\0" in text:
        raise InputError(f"{label}: {_short(text)!r} contains a NUL byte (no file name does)")
    try:
        path = Path(text).expanduser()
        if path.is_file():
            return str(path)
        for candidate in (
            policies_dir / text,
            policies_dir / f"{text}.yaml",
            policies_dir / f"{text}.yml",
        ):
            if candidate.is_file():
                return str(candidate)
    except RuntimeError:  # expanduser: "Could not determine home directory"
        user = text[1:].split("/", 1)[0]
        raise InputError(
            f"{label}: {_short(text)!r}: no user {user!r} (did you mean ~/{text[1:]}?)"
        ) from None
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"{label}: {_short(text)!r}: {reason}") from None
    return text


MAX_PATH_CHARS = 4096
"""Longer text is no path on any file system (Linux's PATH_MAX)."""


def _short(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:30]}…({len(text)} characters)"
