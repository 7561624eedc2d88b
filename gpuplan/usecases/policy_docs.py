"""The key reference of ``docs/policy.md``, generated from the policy JSON Schema.

One table per section (``idle``, ``scope.aws`` ...) with each key's type, default and
description, so the reference cannot drift from the models.
"""

from __future__ import annotations

import json
from typing import Any

from gpuplan.core.policy import Policy

BEGIN = "<!-- BEGIN GENERATED REFERENCE (python scripts/gen_policy_schema.py) -->"
END = "<!-- END GENERATED REFERENCE -->"


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any] | None:
    """The object definition ``node`` points at, through ``$ref`` or ``anyOf [ref, null]``."""
    if "$ref" in node:
        found: dict[str, Any] = defs[node["$ref"].rsplit("/", 1)[-1]]
        return found
    for option in node.get("anyOf", ()):
        if "$ref" in option:
            return _resolve(option, defs)
    return None


def _type(node: dict[str, Any], defs: dict[str, Any]) -> str:
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        if "enum" in target:
            return " \\| ".join(f"`{v}`" for v in target["enum"])
        return "mapping"
    if "const" in node:
        return f"`{node['const']}`"
    kinds = [o.get("type") for o in node.get("anyOf", ())]
    if kinds == ["integer", "string"]:
        return "minutes (`90`) or a duration (`90m`, `2h`)"
    for choice in ("anyOf", "oneOf"):
        if choice in node:
            parts = [_type(o, defs) for o in node[choice] if o.get("type") != "null"]
            return " or ".join(parts)
    kind = node.get("type", "any")
    if kind == "array":
        return f"list of {_type(node.get('items', {}), defs)}"
    if kind == "object":
        return f"mapping of {_type(node.get('additionalProperties', {}), defs)}"
    if kind == "string":
        return "text"
    low, high = node.get("minimum"), node.get("maximum")
    if low is not None and high is not None:
        return f"{kind} {low:g}-{high:g}"
    if node.get("exclusiveMinimum") == 0:
        return f"{kind} > 0"
    return str(kind)


def _default(key: str, prop: dict[str, Any], required: bool, defaults: Any) -> str:
    if required:
        return "**required**"
    if isinstance(defaults, dict) and key in defaults:
        value = defaults[key]
    elif "default" in prop:
        value = prop["default"]
    else:
        return "none"
    if isinstance(value, dict) and value:
        return "see below"
    return f"`{json.dumps(value)}`"


def _sections(
    path: str, definition: dict[str, Any], defs: dict[str, Any]
) -> list[tuple[str, dict[str, Any]]]:
    out = [(path, definition)]
    for key, prop in definition.get("properties", {}).items():
        target = _resolve(prop, defs)
        if target is not None and target.get("type") == "object":
            out.extend(_sections(f"{path}.{key}" if path else key, target, defs))
    return out


def reference_markdown() -> str:
    """Markdown tables for every section of a policy file."""
    from gpuplan.usecases.policy import policy_schema

    schema = policy_schema()
    defs: dict[str, Any] = schema.get("$defs", {})
    base: dict[str, Any] = Policy.model_validate({"version": 1, "name": "x"}).model_dump(
        mode="json"
    )
    lines: list[str] = [BEGIN, ""]
    for path, definition in _sections("", schema, defs):
        defaults: Any = base
        for part in filter(None, path.split(".")):
            defaults = defaults.get(part) if isinstance(defaults, dict) else None
        lines.append(f"### `{path}`" if path else "### top level")
        lines.append("")
        lines.append(definition.get("description", "").replace("\n", " "))
        lines.append("")
        lines.append("| key | type | default | meaning |")
        lines.append("|---|---|---|---|")
        required = set(definition.get("required", ()))
        for key, prop in definition.get("properties", {}).items():
            meaning = prop.get("description", "").replace("\n", " ").replace("|", "\\|")
            if not meaning:
                target = _resolve(prop, defs)
                meaning = (target or {}).get("description", "").replace("\n", " ")
            row = (key, _type(prop, defs), _default(key, prop, key in required, defaults), meaning)
            lines.append("| `{}` | {} | {} | {} |".format(*row))
        lines.append("")
    lines.append(END)
    return "\n".join(lines) + "\n"


def splice_reference(document: str) -> str:
    """``document`` with the text between the markers replaced by the current reference."""
    start, end = document.index(BEGIN), document.index(END) + len(END) + 1
    return document[:start] + reference_markdown() + document[end:]
