"""Turns pydantic's validation errors on a policy into sentences for a person.

``Input should be a valid dictionary`` becomes ``expected a mapping (key: value),
got a list``; an unknown key lists the keys that are allowed there, closest first.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from typing import Any

from pydantic import BaseModel

from gpuplan.core.policy import KeyPath, Policy, PolicyProblem
from gpuplan.core.policy.fields import describe
from gpuplan.core.policy.section import OpenSection

_SIMPLE = {
    "missing": "required key is missing",
    "dict_type": "expected a mapping (key: value), got {got}",
    "model_type": "expected a mapping (key: value), got {got}",
    "list_type": "expected a list, got {got}",
    "string_type": "expected text, got {got}",
    "bool_type": "expected true or false, got {got}",
    "int_type": "expected a whole number, got {got}",
    "float_type": "expected a number, got {got}",
    "too_short": "must not be empty",
    "string_pattern_mismatch": "{got} does not have the expected form",
}


def format_path(loc: KeyPath) -> str:
    """``("planning", "allowed_gpus", 2)`` -> ``planning.allowed_gpus[2]``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def describe_error(err: Any, loc: KeyPath) -> str:
    """One sentence for one pydantic error dict at ``loc``."""
    kind: str = err["type"]
    got = describe(err.get("input"))
    if kind == "value_error":
        return str(err["ctx"]["error"])
    if kind == "extra_forbidden":
        return _unknown_key(loc)
    if kind in ("enum", "literal_error"):
        expected = err.get("ctx", {}).get("expected", "")
        return f"must be one of {expected.replace(chr(39), '')}, got {got}"
    template = _SIMPLE.get(kind)
    if template is not None:
        return template.format(got=got)
    message: str = err["msg"]
    return f"{message[0].lower()}{message[1:]}, got {got}"


def _unknown_key(loc: KeyPath) -> str:
    key = str(loc[-1]) if loc else "?"
    allowed = known_keys(loc[:-1])
    if not allowed:
        return "unknown key"
    close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
    if close:
        return f"unknown key; did you mean '{close[0]}'?"
    return f"unknown key; allowed here: {', '.join(allowed)}"


def known_keys(parent: KeyPath) -> list[str]:
    """The keys the policy allows in the mapping at ``parent`` (empty when not a model)."""
    model: type[BaseModel] | None = Policy
    for part in parent:
        if model is None or not isinstance(part, str):
            return []
        model = _keys(model).get(part)
    return list(_keys(model)) if model is not None else []


def _keys(model: type[BaseModel]) -> dict[str, type[BaseModel] | None]:
    """The keys of ``model``'s mapping, each with the model of its value (None: a plain
    value); a section open to registry entries has their keys too (``scope.<cloud>``)."""
    own = {k: _model_of(f.annotation) for k, f in model.model_fields.items()}
    if not issubclass(model, OpenSection):
        return own
    added = dict(model.registered_keys())
    return {**added, **own} if model.registered_first else {**own, **added}


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if typing.get_origin(annotation) is typing.Annotated:
        return _model_of(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _model_of(arg)
            if found is not None:
                return found
    return None


def prune(raw: dict[Any, Any], field_path: str | None) -> bool:
    """Leave the key at ``field_path`` out (its default applies), so the rest is checked;
    False when there is nothing to leave out (a required key is missing)."""
    parts = [p for p in re.split(r"[.\[\]]", field_path or "") if p]
    parent: Any = raw
    for part in parts[:-1]:
        key: Any = int(part) if isinstance(parent, list) and part.isdigit() else part
        try:
            child = parent[key]
        except (KeyError, IndexError, TypeError):
            return False
        if isinstance(child, list):  # a bad list item: leave the whole list out
            return _drop(parent, key)
        parent = child
    return bool(parts) and _drop(parent, parts[-1])


def follows_from(problem: PolicyProblem, pruned: set[str | None]) -> bool:
    """A rule problem about a key left out (its default stood in): not the file's own."""
    names = {re.split(r"[.\[]", f)[-1] if f else "" for f in pruned} - {""}
    names |= {f.rsplit(".", 1)[-1] for f in pruned if f}
    text = f"{format_path(problem.path)} {problem.message}"
    return any(re.search(rf"\b{re.escape(n)}\b", text) for n in names)


def _drop(parent: Any, key: Any) -> bool:
    if isinstance(parent, dict) and key in parent:
        del parent[key]
        return True
    return False
