"""The base of every policy section: unknown keys are errors, values are frozen, and each
field's docstring is its reference text (the JSON Schema and docs/policy.md).

Two sections also take keys that registry entries add (a cloud's ``scope.<name>``, a
metrics source's ``idle.metrics.<name>``): :func:`split_registered` checks those with the
model the entry names, and leaves every other unknown key an error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidatorFunctionWrapHandler, create_model


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


def split_registered(
    section: type[BaseModel],
    data: Any,
    handler: ValidatorFunctionWrapHandler,
    model_of: Callable[[str], type[BaseModel] | None],
) -> tuple[Any, dict[str, BaseModel]]:
    """For a ``mode="wrap"`` model validator: the section built from its own fields, and
    each registered key's value checked by ``model_of(key)`` (errors at
    ``<section>.<key>.<field>``, as for a field). Keys nobody registered stay errors."""
    if not isinstance(data, dict):
        return handler(data), {}
    models = {
        key: model
        for key in data
        if key not in section.model_fields and (model := model_of(key)) is not None
    }
    built = handler({k: v for k, v in data.items() if k not in models})
    if not models:
        return built, {}
    fields: Any = {key: (model, ...) for key, model in models.items()}
    checked = create_model("RegisteredSections", __config__=Section.model_config, **fields)
    values = checked.model_validate({key: data[key] for key in models})
    return built, {key: getattr(values, key) for key in models}


def splice_sections(
    schema: dict[str, Any], owner: str, sections: Mapping[str, type[BaseModel]]
) -> dict[str, Any]:
    """``schema`` (a policy's JSON Schema) with each registered section as an optional
    property of the ``$defs`` model ``owner`` (``Scope``, ``MetricsSettings``), checked
    by its model's own schema: what validation accepts, the schema accepts too, so an
    editor does not flag a registered cloud's ``scope.<name>`` as an unknown key."""
    defs: dict[str, Any] = schema.setdefault("$defs", {})
    properties: dict[str, Any] = defs[owner].setdefault("properties", {})
    for key, model in sorted(sections.items()):
        sub = model.model_json_schema(ref_template="#/$defs/{model}")
        defs.update(sub.pop("$defs", {}))
        defs[model.__name__] = sub
        properties[key] = {
            "anyOf": [{"$ref": f"#/$defs/{model.__name__}"}, {"type": "null"}],
            "default": None,
        }
    return schema
