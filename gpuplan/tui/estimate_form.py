"""The Estimate form's rules: each numeric field parsed with the CLI's parsers, within
a range, and every message in the form's words (``params``, not ``--params``).

Pure: the form's text in, the use case's arguments or per-field problems out. A field
that fails is named, so the screen can mark it and clear the old results.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from gpuplan.core.errors import InputError
from gpuplan.core.planner.quantities import parse_amount, parse_duration_hours, parse_gpu_counts

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
}


@dataclass(frozen=True)
class FormResult:
    """The checked form: text for :class:`EstimateArgs`, or problems by field id."""

    values: dict[str, str]
    problems: dict[str, str]


def _limit(label: str, text: str, value: float, most: float, unit: str) -> None:
    if value > most:
        raise InputError(f"{label}: at most {unit}, got {text!r}")


def check_params(text: str) -> str:
    value = parse_amount(text, LABELS["params"])
    _limit(LABELS["params"], text, value, 1e14, "100T parameters")
    return text


def check_tokens(text: str) -> str:
    value = parse_amount(text, LABELS["tokens"])
    _limit(LABELS["tokens"], text, value, 1e16, "10,000T tokens")
    return text


def check_gpus(text: str) -> str:
    counts = parse_gpu_counts(text, LABELS["gpus"])
    _limit(LABELS["gpus"], text, max(counts), 100_000, "100,000 GPUs")
    return text


def check_deadline(text: str) -> str:
    """A duration with its unit: ``14`` alone is refused (hours? days?), not guessed."""
    label = LABELS["deadline"]
    if re.fullmatch(r"\s*[0-9]*\.?[0-9]+\s*", text):
        raise InputError(f"{label}: give a unit: {text.strip()}h or {text.strip()}d (or w, m)")
    hours = parse_duration_hours(text, label)
    _limit(label, text, hours, 10 * 365 * 24, "10 years")
    return f"{hours!r}h"


def check_budget(text: str) -> str:
    """USD with suffixes (``20k``, ``1.5M``) and separators (``20,000``)."""
    label = LABELS["budget"]
    try:
        value = parse_amount(text.strip().lstrip("$"), label, allow_zero=True)
    except InputError:
        raise InputError(
            f"{label}: expected USD such as 20000, 20k or 1.5M, got {text!r}"
        ) from None
    _limit(label, text, value, 1e10, "$10,000,000,000")
    return str(Decimal(repr(value)))


CHECKS: Mapping[str, Callable[[str], str]] = {
    "params": check_params,
    "tokens": check_tokens,
    "gpus": check_gpus,
    "deadline": check_deadline,
    "budget": check_budget,
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
            problems[field_id] = str(exc)
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
    """A policy path as typed, or a file name found in the policies folder (``--policies``)."""
    path = Path(text).expanduser()
    if path.exists():
        return str(path)
    for candidate in (
        policies_dir / text,
        policies_dir / f"{text}.yaml",
        policies_dir / f"{text}.yml",
    ):
        if candidate.is_file():
            return str(candidate)
    return text
