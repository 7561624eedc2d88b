"""The base of every policy section: unknown keys are errors, values are frozen, and each
field's docstring is its reference text (the JSON Schema and docs/policy.md).

Three sections also take keys that registry entries add (a cloud's ``scope.<name>``, a
metrics source's ``idle.metrics.<name>``, a cloud's keys of ``bill``): :func:`split_registered`
checks the sections with the model the entry names, and leaves every other unknown key
an error. A cloud's section
model may take :class:`CloudSection` as its base to bring its own rules: the problems
across its keys, and why it leaves an instance out of scope (the policy rules ask every
section; none names a cloud).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidatorFunctionWrapHandler, create_model

if TYPE_CHECKING:
    from gpuplan.core.lifecycle.instances import GpuInstance

SubPath = tuple[str | int, ...]
"""A key path inside one section (``("accounts",)``, ``("zones", 2)``)."""


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class OpenSection(Section):
    """A section that also takes the keys registry entries add (``scope``,
    ``idle.metrics``): :meth:`registered_models` names them, for the loader's
    "did you mean" and the reference."""

    registered_first: ClassVar[bool] = True
    """The keys registry entries add come before the section's own (``scope``,
    ``idle.metrics``: sections) or after them (``bill``: plain keys)."""

    @classmethod
    def registered_models(cls) -> Mapping[str, type[BaseModel]]:
        """The keys registry entries added here, with the model that checks each."""
        return {}

    @classmethod
    def registered_keys(cls) -> Mapping[str, type[BaseModel] | None]:
        """Every key registry entries added here, with the model of its value (None: a
        plain value)."""
        return cls.registered_models()


class CloudSection(Section):
    """A cloud's ``scope.<name>`` section with rules of its own (a registry entry's model;
    a plain pydantic model is a section too, without these rules)."""

    def problems(self) -> list[tuple[SubPath, str]]:
        """What is wrong across this section's keys (each at its path inside the section);
        the policy's problems put them at ``scope.<name>.<path>``."""
        return []

    def out_of_scope(self, instance: GpuInstance) -> str | None:
        """Why this section does not govern ``instance`` of its cloud (a region, an
        account it leaves out), or None when it does."""
        return None


def split_registered(
    section: type[BaseModel],
    data: Any,
    handler: ValidatorFunctionWrapHandler,
    model_of: Callable[[str], type[BaseModel] | None],
) -> tuple[Any, dict[str, BaseModel]]:
    """For a ``mode="wrap"`` model validator: the section built from its own fields, and
    each registered key's value checked by ``model_of(key)`` (errors at
    ``<section>.<key>.<field>``, as for a field). Keys nobody registered stay errors.
    The registered keys and the section's own are checked in one pass: a file with
    errors in both gets every line at once, as when every section was a field."""
    if not isinstance(data, dict):
        return handler(data), {}
    models = {
        key: model
        for key in data
        if key not in section.model_fields and (model := model_of(key)) is not None
    }
    if not models:
        return handler(data), {}
    checked = together(section, tuple((key, (model, ...)) for key, model in models.items()))
    values = checked.model_validate(data)
    built = handler({k: v for k, v in data.items() if k not in models})
    return built, {key: getattr(values, key) for key in models}


@functools.cache
def together(section: type[BaseModel], added: tuple[tuple[str, Any], ...]) -> type[BaseModel]:
    """A model with ``added`` fields (``(name, (annotation, default or FieldInfo))``) and
    ``section``'s own, in that order, checked as ``section`` checks its keys: what one
    pass over a section with registered keys reports."""
    fields: Any = {
        **dict(added),
        **{key: (info.annotation, info) for key, info in section.model_fields.items()},
    }
    return create_model(section.__name__, __config__=section.model_config, **fields)


def splice_sections(
    schema: dict[str, Any],
    owner: str,
    sections: Mapping[str, type[BaseModel]],
    defaulted: Collection[str] = (),
) -> dict[str, Any]:
    """``schema`` (a policy's JSON Schema) with each registered section as an optional
    property of the ``$defs`` model ``owner`` (``Scope``, ``MetricsSettings``), checked
    by its model's own schema, first and in the order given (registration order): what
    validation accepts, the schema accepts too, so an editor does not flag a registered
    cloud's ``scope.<name>`` as an unknown key. A ``defaulted`` section (present with
    its defaults when omitted) is its model, never null; the others default to null."""
    defs: dict[str, Any] = schema.setdefault("$defs", {})
    own: dict[str, Any] = defs[owner].get("properties", {})
    properties: dict[str, Any] = {}
    for key, model in sections.items():
        sub = model.model_json_schema(ref_template="#/$defs/{model}")
        defs.update(sub.pop("$defs", {}))
        defs[model.__name__] = sub
        ref = {"$ref": f"#/$defs/{model.__name__}"}
        properties[key] = (
            ref if key in defaulted else {"anyOf": [ref, {"type": "null"}], "default": None}
        )
    defs[owner]["properties"] = {**properties, **own}
    return schema


def splice_keys(
    schema: dict[str, Any], owner: str, models: Mapping[str, type[BaseModel]]
) -> dict[str, Any]:
    """``schema`` with each registered model's fields as optional properties of the
    ``$defs`` model ``owner`` (``BillSettings``: a cloud's keys of ``bill``), after its
    own and in the order given, each checked as its model checks it."""
    defs: dict[str, Any] = schema.setdefault("$defs", {})
    properties: dict[str, Any] = defs[owner].setdefault("properties", {})
    for model in models.values():
        sub = model.model_json_schema(ref_template="#/$defs/{model}")
        defs.update(sub.pop("$defs", {}))
        properties.update(sub.get("properties", {}))
    return schema
